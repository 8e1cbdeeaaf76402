/**
 * The suite's one polling wait: "probe until this holds, or fail saying what
 * was awaited, what the world looked like, and what the probe last threw".
 */

/** What a probe gives while the awaited thing has not happened yet. */
export type NotYet = undefined | false;

export interface UntilOptions {
  /** The bound: the wait fails once `ms` have passed without a value. Default 15 000. */
  ms?: number;
  /** The pause between probes, in ms. Default 25. */
  everyMs?: number;
  /** What the world looked like, for the failure message; called only when the wait fails. */
  seen?: () => string;
  /**
   * What an error thrown by the probe (or its rejected promise) does:
   * "retry" (the default) counts it as "not yet" and names the last one in the
   * failure message, for probes that fail until something is up (a fetch to a
   * server still starting); "throw" fails the wait at once with it, for probes
   * whose throwing is itself a failure of the test.
   */
  errors?: "retry" | "throw";
}

/** The wait's failure: the bound passed without a value. The probe's last error, if any, is the cause. */
export class UntilTimeout extends Error {
  override readonly name = "UntilTimeout";

  constructor(
    message: string,
    readonly what: string,
    readonly ms: number,
    cause: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

function isThenable<V>(value: V | PromiseLike<V>): value is PromiseLike<V> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}

/**
 * Calls `probe` every `everyMs` until it gives a value other than undefined or
 * false, and resolves with that value. After `ms` it fails with an
 * `UntilTimeout` saying what it waited for (`what`), what `seen()` shows, and
 * the probe's last error. A sync probe is called synchronously, as a plain
 * `while (!check())` loop would.
 */
export async function until<T>(probe: () => T | NotYet | PromiseLike<T | NotYet>, what: string, options: UntilOptions = {}): Promise<T> {
  const { ms = 15_000, everyMs = 25, seen, errors = "retry" } = options;
  const deadline = Date.now() + ms;
  let probes = 0;
  let failed: { error: unknown; probe: number } | undefined;
  for (;;) {
    probes += 1;
    try {
      const given = probe();
      const value = isThenable(given) ? await given : given;
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (errors === "throw") throw error;
      failed = { error, probe: probes };
    }
    if (Date.now() > deadline) {
      let saw = "";
      if (seen !== undefined) {
        try {
          saw = seen();
        } catch (error) {
          saw = `(seen() threw: ${describeError(error)})`;
        }
      }
      const sawPart = saw === "" ? "" : `; saw: ${saw}`;
      const errorPart = failed === undefined ? "" : ` (last error, from probe ${failed.probe} of ${probes}: ${describeError(failed.error)})`;
      throw new UntilTimeout(`timed out after ${ms} ms waiting for ${what}${sawPart}${errorPart}`, what, ms, failed?.error);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
