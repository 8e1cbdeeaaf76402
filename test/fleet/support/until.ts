/** Polls `probe` until it returns a value, failing after `ms` with what it last saw. */
export async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, ms = 15_000, seen: () => string = () => ""): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const saw = seen();
  throw new Error(`timed out after ${ms} ms waiting for ${what}${saw === "" ? "" : `; saw: ${saw}`}${last === undefined ? "" : ` (last error: ${(last as Error).message})`}`);
}
