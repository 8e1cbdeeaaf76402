/**
 * The retry schedule, on an injected clock and timers: first retry within
 * 5 s, exponential with jitter, at most 10 attempts, nothing after an hour,
 * and a bounded queue that drops its oldest job.
 */
import { describe, expect, it } from "vitest";
import { createRetryQueue, type AttemptResult, type JobReport } from "../../src/notify/index.js";

function manualClock() {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => {
      const timer = { at: now + ms, fn };
      timers.push(timer);
      return timer;
    },
    clearTimer: (handle: unknown) => {
      const index = timers.indexOf(handle as (typeof timers)[number]);
      if (index >= 0) timers.splice(index, 1);
    },
    /** Runs the next timer, moving the clock to it; false when none is set. */
    async next(): Promise<boolean> {
      await new Promise((r) => setImmediate(r));
      timers.sort((a, b) => a.at - b.at);
      const timer = timers.shift();
      if (timer === undefined) return false;
      now = timer.at;
      timer.fn();
      await new Promise((r) => setImmediate(r));
      return true;
    },
  };
}

describe("the retry queue", () => {
  it("retries first within 5 s, then exponentially longer, and stops after 10 attempts", async () => {
    for (const jitter of [0, 0.999]) {
      const clock = manualClock();
      const times: number[] = [];
      const reports: JobReport[] = [];
      const queue = createRetryQueue<string>({
        ...clock,
        random: () => jitter,
        attempt: async () => {
          times.push(clock.now());
          return { ok: false, retry: true, status: 503, error: "HTTP 503" } satisfies AttemptResult;
        },
        onDone: (_, report) => reports.push(report),
      });
      queue.push("job");
      while (await clock.next());
      expect(times).toHaveLength(10);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(gaps[0]).toBeLessThanOrEqual(5000);
      expect(gaps[0]).toBeGreaterThan(0);
      // Doubling (the same jitter each time) until the 10-minute cap.
      for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBe(Math.min(gaps[i - 1]! * 2, jitter === 0 ? 300_000 : Math.round(600_000 * (0.5 + jitter / 2))));
      expect(times.at(-1)!).toBeLessThanOrEqual(3_600_000);
      expect(reports).toEqual([{ attempts: 10, result: "gave_up", status: 503, error: "HTTP 503" }]);
      expect(queue.size).toBe(0);
    }
  });

  it("starts no attempt more than an hour after the first", async () => {
    const clock = manualClock();
    const times: number[] = [];
    const queue = createRetryQueue<string>({
      ...clock,
      random: () => 0.999,
      firstRetryMs: 600_000,
      maxDelayMs: 3_000_000,
      attempt: async () => {
        times.push(clock.now());
        return { ok: false, retry: true, error: "ECONNREFUSED" };
      },
    });
    queue.push("job");
    while (await clock.next());
    expect(times.length).toBeLessThan(10);
    expect(times.at(-1)!).toBeLessThanOrEqual(3_600_000);
  });

  it("drops the oldest job, and says so, when the queue is full", async () => {
    const clock = manualClock();
    const reports: Array<[string, JobReport]> = [];
    const queue = createRetryQueue<string>({
      ...clock,
      maxQueued: 2,
      attempt: async () => ({ ok: false, retry: true, error: "ECONNREFUSED" }),
      onDone: (job, report) => reports.push([job, report]),
    });
    queue.push("a");
    queue.push("b");
    queue.push("c");
    expect(queue.size).toBe(2);
    expect(reports).toEqual([["a", { attempts: 1, result: "dropped", error: "the queue for this endpoint holds 2 deliveries" }]]);
    await queue.close();
  });
});
