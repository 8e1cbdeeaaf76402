/**
 * One event, the same content, whichever way it was read (issue 18): every
 * simulator scenario is played against a private simulator over loopback and
 * read three ways —
 *
 * - live: an `AgySession` following the stream (and reading snapshots when it
 *   must), answering each gate as it appears;
 * - snapshot replay: the finished history from `GetCascadeTrajectorySteps`,
 *   through a fresh tracker;
 * - stream replay: the first frame of a new `StreamAgentStateUpdates` (agy
 *   replays the settled steps there, in the stream projection), completed as
 *   the session completes frames (`completeFrame`), through a fresh tracker.
 *
 * The two replays must agree byte for byte. The live log must agree with
 * them on every event, in order, except what docs/events.md names as
 * depending on what was seen: the deltas, `interaction_resolved.stepStatus`
 * and `.response` (the live reading sees the status that ended the wait,
 * a replay only the settled step), the catalog `displayName` the session
 * adds to `model_changed`, and the session's own `history_end` marker.
 */
import { describe, expect, it } from "vitest";
import { startWorld, isTurnEnd, type World } from "./support/session-world.js";
import { createTrajectoryTracker, MapperEventSchema, type EventOf, type MapperEvent } from "../../src/mapper/index.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { watchAgentStateUpdates } from "../../src/rpc/stream-watcher.js";
import { completeFrame } from "../../src/session/request-completion.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { AGY_VERSIONS, DEFAULT_SCENARIO_DIR, loadScenarios, type Scenario } from "../../src/sim/index.js";

type Requested = EventOf<"interaction_requested">;

/** Scenarios whose gates are denied, so both kinds of deny are read back. */
const DENIED = new Set(["Delete the build directory", "Read my shell profile"]);

/** A user turn the scenario answers. */
function turnText(scenario: Scenario): string {
  const match = scenario.match;
  if ("text" in match) return match.text;
  if ("regex" in match) return `${match.regex.replace(/^\^/, "").replace(/\\(.)/g, "$1")}tests and fixtures`;
  return "Hello there";
}

/** Answers every gate of the live log once: deny where the scenario is about a deny, else allow / pick options. */
async function answerGates(world: World, text: string, answered: Set<string>): Promise<void> {
  for (const event of world.log) {
    if (event.type !== "interaction_requested" || answered.has(event.interactionId)) continue;
    answered.add(event.interactionId);
    const gate = event as Requested;
    const request = gate.request;
    let result;
    if (request.kind === "permission") {
      // An instruction for the model rides only on a `permission` answer.
      const instruction = request.variant === undefined ? { instruction: "leave it as it is" } : {};
      result = DENIED.has(text) ? await world.session.deny(gate.interactionId, instruction) : await world.session.approve(gate.interactionId);
    } else if (request.kind === "question") {
      const first = request.questions[0];
      const optionIds = (first?.options ?? []).slice(0, first?.multiSelect === true ? 2 : 1).map((o) => o.id);
      result = await world.session.answer(gate.interactionId, { optionIds });
    } else {
      throw new Error(`step ${gate.stepIndex} waits on a ${request.variant} gate this test cannot answer`);
    }
    expect(result.result, `the answer to step ${gate.stepIndex}`).toBe("delivered");
  }
}

/** Plays the turn live, answering gates, until the turn ends; fails saying what it saw. */
async function playLive(world: World, text: string): Promise<void> {
  const answered = new Set<string>();
  world.sim.engine.tuiPort().submitTurn(text);
  const deadline = Date.now() + 15_000;
  while (!world.log.some(isTurnEnd)) {
    if (Date.now() > deadline) throw new Error(`the turn "${text}" did not end; saw ${world.log.map((e) => e.type).join(", ")}`);
    await answerGates(world, text, answered);
    await world.waitFor((e) => isTurnEnd(e) || (e.type === "interaction_requested" && !answered.has(e.interactionId)), "a gate or the turn's end", 15_000);
  }
}

/** The settled history through a fresh tracker, from a snapshot. */
async function snapshotReplay(world: World): Promise<MapperEvent[]> {
  const client = createAgyRpcClient({ baseUrl: world.sim.plainUrl });
  try {
    const conversationId = world.sim.engine.activeConversationId;
    const { steps } = await client.getCascadeTrajectorySteps({ conversationId });
    return createTrajectoryTracker({ conversationId }).applySnapshot({ steps, stepOffset: 0 });
  } finally {
    await client.close();
  }
}

/** The settled history through a fresh tracker, from the replay frame of a new stream (run status left out: it is not a step). */
async function streamReplay(world: World): Promise<MapperEvent[]> {
  const client = createAgyRpcClient({ baseUrl: world.sim.plainUrl });
  const stop = new AbortController();
  try {
    const conversationId = world.sim.engine.activeConversationId;
    for await (const event of watchAgentStateUpdates(client, { conversationId, signal: stop.signal, readIdleTimeoutMs: 5000 })) {
      if (event.type === "disconnected") throw new Error(`the stream ended before its first frame: ${event.reason?.message ?? "cleanly"}`);
      if (event.type !== "update") continue;
      const { status: _status, fullyIdle: _idle, ...update } = event.update as StreamUpdate & Record<string, unknown>;
      const main = { ...(update["mainTrajectoryUpdate"] as Record<string, unknown>) };
      delete main["status"];
      delete main["fullyIdle"];
      const tracker = createTrajectoryTracker({ conversationId });
      const read = async (stepOffset: number) => (await client.getCascadeTrajectorySteps({ conversationId, stepOffset })).steps;
      const full = await completeFrame({ ...update, mainTrajectoryUpdate: main } as StreamUpdate, tracker, read);
      return [...full.diagnostics, ...tracker.applyStreamUpdate(full.update)];
    }
    throw new Error("the stream gave no frame");
  } finally {
    stop.abort();
    await client.close();
  }
}

/** The live log without what depends on which versions were seen (see the file comment). */
function comparable(log: MapperEvent[]): string[] {
  return (
    log
      // history_end is the session's marker between the read at attach and what follows, not a step's event.
      .filter((e) => e.type !== "message_delta" && e.type !== "reasoning_delta" && e.type !== "history_end")
      .map((e) => {
        if (e.type === "interaction_resolved") {
          const { stepStatus: _s, response: _r, ...rest } = e;
          return JSON.stringify(rest);
        }
        if (e.type === "model_changed") {
          const { displayName: _d, ...rest } = e;
          return JSON.stringify(rest);
        }
        return JSON.stringify(e);
      })
  );
}

const scenarios = await loadScenarios(DEFAULT_SCENARIO_DIR);

describe("one event, the same content, whichever way it was read", () => {
  it("covers every scenario file", () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(16);
  });

  it("shows the committed text of an interrupted answer live and in the replay, marked interrupted", async () => {
    const world = await startWorld({ speed: 1 });
    try {
      world.sim.engine.tuiPort().submitTurn("Write a long essay about patience");
      await world.waitFor((e) => e.type === "message_delta" && e.index >= 2, "a few chunks of the answer");
      expect((await world.session.interrupt()).result).toBe("cancelled");
      const live = (await world.waitFor((e) => e.type === "message", "the interrupted answer's message")) as EventOf<"message">;
      expect(live).toMatchObject({ interrupted: true, failed: false });
      expect(live.text.length).toBeGreaterThan(0);
      const deltas = world.log.filter((e): e is EventOf<"message_delta"> => e.type === "message_delta" && e.messageId === live.messageId);
      expect(deltas.reduce((text, d) => (d.replace ? d.text : text + d.text), "")).toBe(live.text);
      const replayed = (await snapshotReplay(world)).filter((e) => e.type === "message");
      expect(replayed.map((e) => JSON.stringify(e))).toEqual([JSON.stringify(live)]);
    } finally {
      await world.close();
    }
  }, 30_000);

  const cases = AGY_VERSIONS.flatMap((version) => scenarios.map((s) => [turnText(s), version] as const));
  it.each(cases)(
    "reads %s the same live, from a snapshot and from a stream replay (agy %s)",
    async (text, agyVersion) => {
      const world = await startWorld({ speed: 0.05, agyVersion });
      try {
        await playLive(world, text);
        const snapshot = await snapshotReplay(world);
        const stream = await streamReplay(world);
        for (const event of [...snapshot, ...stream, ...world.log]) MapperEventSchema.parse(event);
        // Arguments in their documented form (docs/events.md, function_call): paths, not file:// URIs; numbers, not int64 text.
        for (const call of snapshot.filter((e): e is EventOf<"function_call"> => e.type === "function_call")) {
          for (const value of Object.values(JSON.parse(call.arguments) as Record<string, unknown>)) {
            expect(typeof value === "string" && (value.startsWith("file://") || /^-?[0-9]+$/.test(value)), `${call.name} ${call.arguments}`).toBe(false);
          }
        }
        // The two replays: byte for byte, every event.
        expect(stream.map((e) => JSON.stringify(e))).toEqual(snapshot.map((e) => JSON.stringify(e)));
        // Live against the replay: the same events, in the same order, up to the live log's end of turn.
        expect(comparable(world.log)).toEqual(comparable(snapshot));
        // A deny reads like a deny, live and in the replay; an allow like an allow.
        for (const log of [world.log, snapshot]) {
          for (const resolved of log.filter((e): e is EventOf<"interaction_resolved"> => e.type === "interaction_resolved")) {
            const expected = resolved.kind === "question" ? "answered" : DENIED.has(text) ? "denied" : "approved";
            expect(resolved.outcome, `step ${resolved.stepIndex}`).toBe(expected);
            const output = log.find((e): e is EventOf<"function_call_output"> => e.type === "function_call_output" && e.stepIndex === resolved.stepIndex);
            expect(output?.declined === true, `the output of step ${resolved.stepIndex}`).toBe(expected === "denied");
            if (expected === "denied") expect(output?.isError).toBe(true);
          }
        }
      } finally {
        await world.close();
      }
    },
    30_000,
  );
});
