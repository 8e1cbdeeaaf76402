/**
 * Deliveries to one endpoint, each retried on its own timer: the first retry
 * within 5 s, then exponentially longer with jitter, up to 10 attempts or an
 * hour, whichever comes first. Nothing awaits a delivery — a session hands a
 * job over and moves on — and each endpoint has its own queue, so a dead
 * endpoint delays nothing but its own deliveries. The queue is bounded: when
 * it is full the oldest job is dropped (and reported), since a newer notice
 * says more about what is waiting now.
 */

export interface RetryPolicy {
  /** Attempts per job, the first included (default 10). */
  maxAttempts?: number;
  /** No attempt starts later than this after the first (default 1 hour). */
  maxAgeMs?: number;
  /** The delay before the first retry is between half and all of this (default 4000 ms). */
  firstRetryMs?: number;
  /** No single delay is longer than this (default 10 minutes). */
  maxDelayMs?: number;
  /** Jobs held at once, in flight or waiting to retry (default 100). */
  maxQueued?: number;
}

/** What one attempt did. `retry: false` gives up at once (a 4xx that will not change). */
export type AttemptResult = { ok: true; status?: number } | { ok: false; retry: boolean; status?: number; error: string };

export interface JobReport {
  attempts: number;
  result: "delivered" | "gave_up" | "dropped";
  status?: number;
  error?: string;
}

export interface RetryQueueOptions<J> extends RetryPolicy {
  attempt(job: J, attemptNumber: number): Promise<AttemptResult>;
  /** Each job's end: delivered, given up after its attempts or age, or dropped from a full queue. */
  onDone?: (job: J, report: JobReport) => void;
  /** Default `Math.random`. */
  random?: () => number;
  /** Default `Date.now`. */
  now?: () => number;
  /** Default the global timers. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export interface RetryQueue<J> {
  push(job: J): void;
  /** Jobs not yet finished. */
  readonly size: number;
  /** Cancels waiting retries and waits for attempts in flight. */
  close(): Promise<void>;
}

interface Entry<J> {
  job: J;
  attempts: number;
  firstAt: number;
  timer?: unknown;
  running?: Promise<void> | undefined;
  done: boolean;
}

export function createRetryQueue<J>(options: RetryQueueOptions<J>): RetryQueue<J> {
  const maxAttempts = options.maxAttempts ?? 10;
  const maxAgeMs = options.maxAgeMs ?? 3_600_000;
  const firstRetryMs = options.firstRetryMs ?? 4000;
  const maxDelayMs = options.maxDelayMs ?? 600_000;
  const maxQueued = options.maxQueued ?? 100;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout));
  const entries: Entry<J>[] = [];
  let closed = false;

  function finish(entry: Entry<J>, report: JobReport): void {
    if (entry.done) return;
    entry.done = true;
    if (entry.timer !== undefined) clearTimer(entry.timer);
    const index = entries.indexOf(entry);
    if (index >= 0) entries.splice(index, 1);
    options.onDone?.(entry.job, report);
  }

  /** Exponential with jitter: between half and all of firstRetryMs·2^(n-1), capped. */
  function delayAfter(attempts: number): number {
    const full = Math.min(maxDelayMs, firstRetryMs * 2 ** (attempts - 1));
    return Math.round(full * (0.5 + random() / 2));
  }

  function run(entry: Entry<J>): void {
    entry.timer = undefined;
    if (closed || entry.done) return;
    entry.attempts += 1;
    entry.running = options
      .attempt(entry.job, entry.attempts)
      .catch((error: unknown): AttemptResult => ({ ok: false, retry: true, error: error instanceof Error ? error.message : String(error) }))
      .then((result) => {
        entry.running = undefined;
        if (result.ok) {
          finish(entry, { attempts: entry.attempts, result: "delivered", ...(result.status === undefined ? {} : { status: result.status }) });
          return;
        }
        const failed = { attempts: entry.attempts, ...(result.status === undefined ? {} : { status: result.status }), error: result.error };
        const delay = delayAfter(entry.attempts);
        if (!result.retry || entry.attempts >= maxAttempts || now() + delay - entry.firstAt > maxAgeMs) {
          finish(entry, { ...failed, result: "gave_up" });
          return;
        }
        if (closed) return;
        entry.timer = setTimer(() => run(entry), delay);
      });
  }

  return {
    push(job) {
      if (closed) return;
      while (entries.length >= maxQueued) {
        const oldest = entries[0]!;
        finish(oldest, { attempts: oldest.attempts, result: "dropped", error: `the queue for this endpoint holds ${maxQueued} deliveries` });
      }
      const entry: Entry<J> = { job, attempts: 0, firstAt: now(), done: false };
      entries.push(entry);
      run(entry);
    },
    get size() {
      return entries.length;
    },
    async close() {
      closed = true;
      const inflight = entries.map((e) => e.running).filter((p): p is Promise<void> => p !== undefined);
      for (const entry of entries) if (entry.timer !== undefined) clearTimer(entry.timer);
      await Promise.allSettled(inflight);
    },
  };
}
