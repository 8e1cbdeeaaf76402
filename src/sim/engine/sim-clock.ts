/**
 * Time for the simulator: the clock and timers are injected so tests can
 * drive them; the default is the system clock.
 */

/** An opaque timer handle returned by {@link SimClock.setTimeout}. */
export type SimTimer = unknown;

export interface SimClock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): SimTimer;
  clearTimeout(timer: SimTimer): void;
}

/** The real clock: `Date.now` and the host's timers. */
export const systemClock: SimClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

/**
 * Makes RFC 3339 timestamps with 9 fractional digits, as agy's newer builds
 * write them (`2026-08-02T04:49:08.449792278Z`, agy 1.0.x August stream
 * captures). Stamps taken within one millisecond still increase, so status
 * transitions keep their order.
 */
export function createWireStamper(clock: SimClock): () => string {
  let lastMs = -1;
  let lastSub = 0;
  let seq = 0;
  return () => {
    const ms = Math.max(clock.now(), lastMs);
    seq += 1;
    const sub = ms === lastMs ? Math.min(lastSub + 1 + (seq % 97), 999_999) : (seq * 104_729) % 500_000;
    lastMs = ms;
    lastSub = sub;
    const iso = new Date(ms).toISOString(); // 2026-08-02T04:49:08.449Z
    return `${iso.slice(0, -1)}${String(sub).padStart(6, "0")}Z`;
  };
}
