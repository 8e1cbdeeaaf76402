/**
 * The one abortable pause (util/sleep.ts) the stream watcher, the reader,
 * the background-task watch and `capture` share: it ends at its time, ends
 * early on abort, and does not wait at all on a signal that had aborted
 * before it began (the copies it replaced waited out the whole pause then);
 * and `untilAborted`, the "run until stopped" of serve, mcp, relay and sim.
 */
import { describe, expect, it } from "vitest";
import { sleep, type SleepTimers, untilAborted } from "../../src/util/sleep.js";

/** Timers a test fires by hand, so no test waits for a clock. */
function handTimers(): SleepTimers & { pending: number; fire(): void } {
  const waiting = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout(fn) {
      waiting.set(++next, fn);
      return next;
    },
    clearTimeout(handle) {
      waiting.delete(handle as number);
    },
    get pending() {
      return waiting.size;
    },
    fire() {
      for (const [id, fn] of [...waiting]) {
        waiting.delete(id);
        fn();
      }
    },
  };
}

describe("sleep", () => {
  it("resolves when its timer fires, and not before", async () => {
    const timers = handTimers();
    let done = false;
    const pause = sleep(60_000, new AbortController().signal, timers).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    expect(timers.pending).toBe(1);
    timers.fire();
    await pause;
    expect(done).toBe(true);
  });

  it("ends early on abort, clearing its timer and its listener", async () => {
    const timers = handTimers();
    const controller = new AbortController();
    const pause = sleep(60_000, controller.signal, timers);
    controller.abort();
    await pause;
    expect(timers.pending).toBe(0);
  });

  it("does not start a timer on a signal that had aborted already", async () => {
    const timers = handTimers();
    await sleep(60_000, AbortSignal.abort(), timers);
    expect(timers.pending).toBe(0);
  });

  it("uses the process's timers by default", async () => {
    const started = Date.now();
    await sleep(5, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4);
  });
});

describe("untilAborted", () => {
  it("stays pending until the signal aborts, then resolves", async () => {
    const controller = new AbortController();
    let done = false;
    const waiting = untilAborted(controller.signal).then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    controller.abort();
    await waiting;
    expect(done).toBe(true);
  });

  it("resolves at once on a signal that had aborted already", async () => {
    await expect(untilAborted(AbortSignal.abort())).resolves.toBeUndefined();
  });
});
