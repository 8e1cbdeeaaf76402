/**
 * A pause that ends early, without an error, when `signal` aborts — also when
 * it had aborted before the pause began. `timers` lets a test drive the clock;
 * by default the process's own timers.
 */

/** The timer functions a pause uses. */
export interface SleepTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const PROCESS_TIMERS: SleepTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal, timers: SleepTimers = PROCESS_TIMERS): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      timers.clearTimeout(handle);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const handle = timers.setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Resolves once `signal` aborts (at once if it already had): a command's "run until stopped". */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
