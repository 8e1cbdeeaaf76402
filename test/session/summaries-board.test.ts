import { describe as group, expect, it } from "vitest";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { AgySession, createSummariesBoard, type AgySessionApi } from "../../src/session/index.js";
import { nextTicket } from "../../src/session/summaries-board.js";
import { isIdle, slimSummaries } from "../../src/session/run-status.js";
import { startSimServer } from "../../src/sim/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { isTurnEnd, wrapClient } from "./support/session-world.js";
import { until } from "../support/until.js";

/** A fetch whose answers the test releases one at a time. */
function manualFetch() {
  const waiting: Array<(value: Record<string, unknown>) => void> = [];
  const failing: Array<(error: Error) => void> = [];
  let calls = 0;
  return {
    fetch: () =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        calls++;
        waiting.push(resolve);
        failing.push(reject);
      }),
    answer(value: Record<string, unknown>) {
      failing.shift();
      waiting.shift()!(value);
    },
    fail(error: Error) {
      waiting.shift();
      failing.shift()!(error);
    },
    get calls() {
      return calls;
    },
  };
}

group("the summaries board", () => {
  it("shares one reading among callers whose latest events are older than it, and reads again for one whose events are newer", async () => {
    let now = 1000;
    const board = createSummariesBoard(() => now);
    const f = manualFetch();
    const before = nextTicket();
    const first = board.read("http://127.0.0.1:1", f.fetch, { after: before, maxAgeMs: 3000 });
    // A second caller while the first reading is in flight joins it.
    const joined = board.read("http://127.0.0.1:1", f.fetch, { after: before, maxAgeMs: 3000 });
    expect(f.calls).toBe(1);
    f.answer({ a: { status: "CASCADE_RUN_STATUS_IDLE" } });
    const [a, b] = await Promise.all([first, joined]);
    expect(a).toBe(b);
    expect(a.ticket).toBeGreaterThan(before);
    // Later, within the age: shared without a call.
    now += 2000;
    expect(await board.read("http://127.0.0.1:1", f.fetch, { after: before, maxAgeMs: 3000 })).toBe(a);
    expect(f.calls).toBe(1);
    // A caller that saw events after the reading was requested gets a new one.
    const eventsSeen = nextTicket();
    const fresh = board.read("http://127.0.0.1:1", f.fetch, { after: eventsSeen, maxAgeMs: 3000 });
    expect(f.calls).toBe(2);
    f.answer({ a: { status: "CASCADE_RUN_STATUS_RUNNING" } });
    const c = await fresh;
    expect(c.ticket).toBeGreaterThan(eventsSeen);
    expect(c.summaries).toEqual({ a: { status: "CASCADE_RUN_STATUS_RUNNING" } });
  });

  it("reads again once the latest reading is older than the caller accepts, and keeps servers apart", async () => {
    let now = 0;
    const board = createSummariesBoard(() => now);
    const f = manualFetch();
    const p1 = board.read("http://127.0.0.1:1", f.fetch, { after: 0, maxAgeMs: 100 });
    f.answer({ one: {} });
    await p1;
    const other = board.read("http://127.0.0.1:2", f.fetch, { after: 0, maxAgeMs: 100 });
    expect(f.calls).toBe(2);
    f.answer({ two: {} });
    expect((await other).summaries).toEqual({ two: {} });
    now = 101;
    const p2 = board.read("http://127.0.0.1:1", f.fetch, { after: 0, maxAgeMs: 100 });
    expect(f.calls).toBe(3);
    f.answer({ one: { again: true } });
    expect((await p2).summaries).toEqual({ one: { again: true } });
  });

  it("lets one caller stop waiting without ending the shared read, and gives every caller a failed read's error", async () => {
    const board = createSummariesBoard(() => 0);
    const f = manualFetch();
    const quitter = new AbortController();
    const a = board.read("s", f.fetch, { after: 0, maxAgeMs: 10, signal: quitter.signal });
    const b = board.read("s", f.fetch, { after: 0, maxAgeMs: 10 });
    quitter.abort(new Error("stopped"));
    await expect(a).rejects.toThrow("stopped");
    f.answer({ x: {} });
    expect((await b).summaries).toEqual({ x: {} });

    const c = board.read("t", f.fetch, { after: 0, maxAgeMs: 10 });
    const d = board.read("t", f.fetch, { after: 0, maxAgeMs: 10 });
    f.fail(new Error("connection refused"));
    await expect(c).rejects.toThrow("connection refused");
    await expect(d).rejects.toThrow("connection refused");
    // A failed read is not kept: the next caller reads again.
    const e = board.read("t", f.fetch, { after: 0, maxAgeMs: 10 });
    expect(f.calls).toBe(3);
    f.answer({ y: {} });
    expect((await e).summaries).toEqual({ y: {} });
  });
});

group("sessions sharing a board", () => {
  it("twenty idle sessions on one server make about one run-status call per interval between them, and still close their turns", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    const board = createSummariesBoard();
    const sessions: AgySessionApi[] = [];
    const logs: MapperEvent[][] = [];
    let readings = 0;
    const clientFactory = (o: Parameters<typeof createAgyRpcClient>[0]) => {
      const real = createAgyRpcClient(o);
      return wrapClient(real, {
        getAllCascadeTrajectories: (...args) => {
          readings++;
          return real.getAllCascadeTrajectories(...args);
        },
      });
    };
    const interval = 200;
    try {
      const id = sim.engine.activeConversationId;
      for (let i = 0; i < 20; i++) {
        const session = await AgySession.attach({ url: sim.plainUrl, conversationId: id, clientFactory, summariesBoard: board, idleCheckIntervalMs: interval });
        const log: MapperEvent[] = [];
        void (async () => {
          for await (const event of session.events()) log.push(event);
        })();
        sessions.push(session);
        logs.push(log);
      }
      // Idle: count the calls over a stretch of at least ten intervals.
      const from = readings;
      const started = performance.now();
      await until(() => readings - from >= 10, "ten run-status readings", { ms: 20_000, everyMs: 10, seen: () => String(readings - from) });
      const elapsed = performance.now() - started;
      // Shared, a reading is made only when the latest is older than the interval (one per interval,
      // plus one in flight at the start); twenty sessions reading alone would make twenty per interval.
      expect(readings - from).toBeLessThanOrEqual(Math.floor(elapsed / interval) + 2);
      // The backstop still works through shared readings: a turn runs and closes in every session.
      sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      for (const [i, log] of logs.entries()) {
        await until(() => log.some((e) => e.type === "user_message") && log.some(isTurnEnd), `session ${i}'s turn to close`, {
          ms: 20_000,
          everyMs: 10,
          seen: () => log.map((e) => e.type).join(" "),
        });
      }
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
      await sim.close();
    }
  }, 60_000);
});

group("the readings a board keeps", () => {
  it("cut each waiting entry to its step index, and read the same for the backstop and rotation", () => {
    const summaries = {
      a: {
        status: "CASCADE_RUN_STATUS_IDLE",
        lastUserInputTime: "2026-12-01T10:00:00Z",
        waitingSteps: [
          { step: { type: "CORTEX_STEP_TYPE_RUN_COMMAND", runCommand: { commandLine: "x".repeat(10_000) } } },
          { stepIndex: 7, step: { type: "CORTEX_STEP_TYPE_RUN_COMMAND" } },
        ],
      },
      b: { status: "CASCADE_RUN_STATUS_IDLE", fullyIdle: true, trajectoryMetadata: { rootConversationId: "a", createdAt: "2026-12-01T09:00:00Z" } },
    };
    const slim = slimSummaries(summaries);
    expect(slim).toEqual({
      a: { status: "CASCADE_RUN_STATUS_IDLE", lastUserInputTime: "2026-12-01T10:00:00Z", waitingSteps: [{}, { stepIndex: 7 }] },
      b: summaries.b,
    });
    for (const id of ["a", "b"] as const) expect(isIdle(slim[id] as Record<string, unknown>)).toBe(isIdle(summaries[id]));
    expect(JSON.stringify(slim).length).toBeLessThan(500);
  });
});
