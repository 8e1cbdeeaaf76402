/**
 * The background-task fold (pure) and its reading loop over a stand-in
 * reader: which status edges the status row's `N task(s)` makes while the
 * wire says idle, and what a vanished pane does.
 */
import { describe, expect, it } from "vitest";
import { AgyBridgeError, TmuxError } from "../../src/errors.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { BackgroundTaskFold, BackgroundTaskWatch, paneKey, SharedRowReadings } from "../../src/session/background-tasks.js";
import { AgySession } from "../../src/session/index.js";
import { until } from "../support/until.js";

const CID = "c-1";
const status = (s: "running" | "waiting" | "idle" | "failed", reason: string, extra: object = {}): MapperEvent =>
  ({ type: "status", conversationId: CID, status: s, reason, ...extra }) as MapperEvent;
const WAITING_BG = { type: "status", conversationId: CID, status: "waiting", reason: "background_task_running", waitingFor: "background_task" };
const IDLE_BG = { type: "status", conversationId: CID, status: "idle", reason: "background_task_ended" };
const PANE = { target: "%1" };

describe("the background-task fold", () => {
  it("reads nothing into a wire that is not idle", () => {
    const fold = new BackgroundTaskFold();
    expect(fold.read(2, CID)).toBeUndefined();
    fold.pass([status("running", "turn_started")]);
    expect(fold.read(2, CID)).toBeUndefined();
  });

  it("waits for a background task while the wire is idle and the row shows one, and is idle again when it goes", () => {
    const fold = new BackgroundTaskFold();
    fold.pass([status("running", "turn_started"), status("idle", "turn_completed")]);
    expect(fold.read(0, CID)).toBeUndefined();
    expect(fold.read(1, CID)).toEqual(WAITING_BG);
    expect(fold.read(1, CID)).toBeUndefined();
    expect(fold.read(3, CID)).toBeUndefined();
    expect(fold.read(0, CID)).toEqual(IDLE_BG);
    expect(fold.read(0, CID)).toBeUndefined();
  });

  it("takes the tracker's idle at attach, but not once a wire status went by", () => {
    const seeded = new BackgroundTaskFold();
    seeded.seed(true);
    expect(seeded.read(1, CID)).toEqual(WAITING_BG);
    const late = new BackgroundTaskFold();
    late.pass([status("running", "turn_started")]);
    late.seed(true);
    expect(late.wireIdle).toBe(false);
  });

  it("lets the wire's edges through and stops waiting on them", () => {
    const fold = new BackgroundTaskFold();
    fold.seed(true);
    expect(fold.read(1, CID)).toEqual(WAITING_BG);
    const running = [status("running", "turn_started"), { type: "user_message", conversationId: CID } as MapperEvent];
    expect(fold.pass(running)).toBe(running);
    expect(fold.wireIdle).toBe(false);
    // The task still shows, but the turn is what the session is in now.
    expect(fold.read(1, CID)).toBeUndefined();
    fold.pass([status("idle", "turn_completed")]);
    expect(fold.read(1, CID)).toEqual(WAITING_BG);
  });

  it("lets a gate's waiting through after a background wait (what it waits for changed)", () => {
    const fold = new BackgroundTaskFold();
    fold.seed(true);
    fold.read(1, CID);
    const gate = [status("waiting", "interaction_pending", { waitingFor: "permission" })];
    expect(fold.pass(gate)).toEqual(gate);
  });

  it("drops a wire status that repeats the one the fold gave last, and keeps the rest of the batch", () => {
    const fold = new BackgroundTaskFold();
    fold.pass([status("running", "turn_started"), status("idle", "turn_completed")]);
    fold.read(1, CID);
    fold.read(0, CID);
    const message = { type: "message", conversationId: CID, text: "done" } as unknown as MapperEvent;
    expect(fold.pass([message, status("idle", "run_idle"), message])).toEqual([message, message]);
    // A repeat of the wire's own status is the wire's business: it passes.
    expect(fold.pass([status("idle", "run_idle")])).toHaveLength(1);
  });

  it("passes a batch without a status as it is", () => {
    const fold = new BackgroundTaskFold();
    const batch = [{ type: "history_end", conversationId: CID } as MapperEvent];
    expect(fold.pass(batch)).toBe(batch);
  });
});

/**
 * A watch over a stand-in reader whose answers the test sets, with pauses the
 * test ends (`tick`); every event it publishes is logged.
 */
function watchWith(read: () => Promise<number>, pane: () => Promise<{ target: string } | undefined> = async () => PANE) {
  const log: MapperEvent[] = [];
  const life = new AbortController();
  const pauses: Array<() => void> = [];
  /** Every pause's length, in the order the loop asked for them. */
  const pauseMs: number[] = [];
  let reads = 0;
  const watch = new BackgroundTaskWatch({
    intervalMs: 2000,
    pane,
    readTasks: () => {
      reads += 1;
      return read();
    },
    conversationId: () => CID,
    publish: (events) => log.push(...events),
    signal: life.signal,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        pauseMs.push(ms);
        pauses.push(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      }),
  });
  const paused = () => until(() => pauses.length > 0, "the loop to pause", { seen: () => `${reads} reads, reading ${watch.reading}` });
  return {
    watch,
    log,
    life,
    pauseMs,
    reads: () => reads,
    /** Waits for the loop's pause, then ends it. */
    async tick() {
      await paused();
      pauses.shift()!();
    },
    paused,
    stopped: () => until(() => !watch.reading, "the loop to stop", { seen: () => `${reads} reads` }),
  };
}

describe("the background-task reading loop", () => {
  it("reads the row while the wire is idle and publishes each edge once", async () => {
    let tasks = 1;
    const w = watchWith(async () => tasks);
    w.watch.seed(true);
    await w.paused();
    expect(w.log).toEqual([WAITING_BG]);
    await w.tick();
    await w.paused();
    expect(w.reads()).toBe(2);
    expect(w.log).toEqual([WAITING_BG]);
    tasks = 0;
    await w.tick();
    await w.paused();
    expect(w.log).toEqual([WAITING_BG, IDLE_BG]);
    await w.tick();
    await w.paused();
    expect(w.log).toHaveLength(2);
    w.life.abort();
    await w.stopped();
  });

  it("backs off while the row keeps showing no task, up to the longest pause (15 × the first)", async () => {
    const w = watchWith(async () => 0);
    w.watch.seed(true);
    for (let i = 0; i < 6; i++) await w.tick();
    await w.paused();
    expect(w.pauseMs).toEqual([2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(w.reads()).toBe(7);
    w.life.abort();
    await w.stopped();
  });

  it("goes back to the first cadence when tasks show, and at once on a wire status edge", async () => {
    let tasks = 0;
    const w = watchWith(async () => tasks);
    w.watch.seed(true);
    for (let i = 0; i < 3; i++) await w.tick();
    await w.paused();
    expect(w.pauseMs).toEqual([2000, 4000, 8000, 16000]);
    tasks = 1;
    await w.tick();
    await w.paused();
    expect(w.pauseMs.at(-1)).toBe(2000);
    expect(w.log).toEqual([WAITING_BG]);
    tasks = 0;
    for (let i = 0; i < 3; i++) await w.tick();
    await w.paused();
    expect(w.pauseMs.slice(-3)).toEqual([2000, 4000, 8000]);
    // A turn ran and ended during the long pause: the pause ends by itself, the row is read at once, the cadence starts over.
    const before = w.reads();
    const pausesBefore = w.pauseMs.length;
    w.watch.pass([status("running", "turn_started")]);
    w.watch.pass([status("idle", "turn_completed")]);
    await until(() => w.reads() > before, "a reading right after the wire went idle again", { seen: () => `${w.reads()} reads` });
    await until(() => w.pauseMs.length > pausesBefore, "the next pause", { seen: () => JSON.stringify(w.pauseMs) });
    expect(w.pauseMs.at(-1)).toBe(2000);
    w.life.abort();
    await w.stopped();
  });

  it("stops reading when the wire leaves idle and starts again when it is back", async () => {
    const w = watchWith(async () => 0);
    w.watch.seed(true);
    await w.paused();
    w.watch.pass([status("running", "turn_started")]);
    await w.tick();
    await w.stopped();
    expect(w.reads()).toBe(1);
    w.watch.pass([status("idle", "turn_completed")]);
    await w.paused();
    expect(w.reads()).toBe(2);
    w.life.abort();
    await w.stopped();
  });

  it("reads nothing without a pane", async () => {
    const w = watchWith(
      async () => 1,
      async () => undefined,
    );
    w.watch.seed(true);
    await w.stopped();
    w.watch.pass([status("running", "turn_started"), status("idle", "turn_completed")]);
    await w.stopped();
    expect(w.reads()).toBe(0);
    expect(w.log).toEqual([]);
  });

  it("says once that a vanished pane is gone, and reads no more", async () => {
    const w = watchWith(async () => {
      throw new TmuxError("no_target", "No pane %1 on tmux server -L x; pick another pane.");
    });
    w.watch.seed(true);
    await w.stopped();
    expect(w.log).toEqual([
      { type: "diagnostic", conversationId: CID, code: "pane_gone", message: expect.stringContaining("agy's tmux pane is gone (No pane %1") },
    ]);
    w.watch.pass([status("running", "turn_started"), status("idle", "turn_completed")]);
    expect(w.watch.reading).toBe(false);
    expect(w.reads()).toBe(1);
    expect(w.log).toHaveLength(1);
  });

  it("gives up after repeated read failures of another kind, with one diagnostic", async () => {
    const w = watchWith(async () => {
      throw new TmuxError("timeout", "tmux capture-pane did not finish within 5000 ms");
    });
    w.watch.seed(true);
    for (let i = 1; i < 5; i++) await w.tick();
    await w.stopped();
    expect(w.reads()).toBe(5);
    expect(w.log).toEqual([
      { type: "diagnostic", conversationId: CID, code: "pane_gone", message: expect.stringContaining("could not be read 5 times in a row") },
    ]);
  });

  it("stops when the session closes", async () => {
    const w = watchWith(async () => 0);
    w.watch.seed(true);
    await w.paused();
    w.life.abort();
    await w.stopped();
    expect(w.reads()).toBe(1);
    w.watch.pass([status("running", "turn_started"), status("idle", "turn_completed")]);
    expect(w.watch.reading).toBe(false);
  });
});

describe("the backgroundTasks option", () => {
  it("refuses a cadence that is not at least 10 ms before touching agy, saying what it needs", async () => {
    for (const intervalMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const attached = AgySession.attach({ url: "http://127.0.0.1:9", backgroundTasks: { intervalMs } });
      await expect(attached).rejects.toBeInstanceOf(AgyBridgeError);
      await expect(attached).rejects.toMatchObject({
        code: "invalid_argument",
        message: expect.stringContaining("backgroundTasks.intervalMs must be a number of milliseconds, at least 10"),
      });
    }
  });
});

describe("status-row readings shared by the sessions of one pane", () => {
  it("gives a reading taken less than freshMs ago to every asker, and reads again after", async () => {
    const shared = new SharedRowReadings();
    let reads = 0;
    const read = async () => ++reads;
    const key = paneKey({ target: "%1", socketName: "a" });
    expect(await shared.read(key, 1000, read, 0)).toBe(1);
    expect(await shared.read(key, 1000, read, 999)).toBe(1);
    expect(await shared.read(paneKey({ target: "%1", socketName: "b" }), 1000, read, 999)).toBe(2);
    expect(await shared.read(key, 1000, read, 1000)).toBe(3);
    expect(reads).toBe(3);
  });

  it("shares a reading in flight, and keeps no failed one", async () => {
    const shared = new SharedRowReadings();
    let release!: (n: number) => void;
    let reads = 0;
    const slow = () => {
      reads += 1;
      return new Promise<number>((resolve) => (release = resolve));
    };
    const first = shared.read("k", 1000, slow, 0);
    const second = shared.read("k", 1000, slow, 10);
    release(4);
    expect(await Promise.all([first, second])).toEqual([4, 4]);
    expect(reads).toBe(1);
    const failed = shared.read("f", 1000, async () => Promise.reject(new Error("tmux capture-pane failed")), 0);
    await expect(failed).rejects.toThrow("capture-pane");
    expect(await shared.read("f", 1000, async () => 7, 1)).toBe(7);
  });
});
