/**
 * What the stream says about gates (spike-notes §5.2): a gate's move to
 * WAITING is one frame, nothing follows while it is parked, and the second
 * gate of a chained command parks with no frame at all, so only a re-scan
 * (a snapshot or `waitingSteps`) finds it. Checked with a stream-only client
 * built on the real mapper, against the real simulator over loopback.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTrajectoryTracker, type MapperEvent } from "../../src/mapper/index.js";
import type { Scenario, ScriptStep } from "../../src/sim/engine/scenario-schema.js";
import { loadScenarios } from "../../src/sim/engine/scenarios.js";
import type { SimServer } from "../../src/sim/server/server.js";
import { pollSteps, sendTurn, startTestSim, summaries } from "./support/sim-harness.js";
import { approve, startStreamOnlyConsumer, type StreamOnlyConsumer } from "./support/stream-consumer.js";
import { eventually, openStream, unary, type Json } from "./support/wire-client.js";

const scenarios = await loadScenarios();

const isGate = (step: ScriptStep): boolean =>
  (step.kind === "command" && step.gate !== false) || step.kind === "question" || (step.kind === "viewFile" && step.askFilePermission === true);
const isSilent = (step: ScriptStep): boolean => step.kind === "command" && step.silentGate === true;
const turnText = (scenario: Scenario): string => {
  if (!("text" in scenario.match)) throw new Error(`scenario ${scenario.name} has no exact text to send`);
  return scenario.match.text;
};
const gated = scenarios.filter((s) => s.steps.some(isGate));

const servers: SimServer[] = [];
const consumers: StreamOnlyConsumer[] = [];
afterEach(async () => {
  for (const consumer of consumers.splice(0)) consumer.stop();
  for (const server of servers.splice(0)) await server.close();
});

async function world(list: Scenario[] = scenarios): Promise<{ server: SimServer; cascadeId: string; consumer: StreamOnlyConsumer }> {
  const server = await startTestSim({ scenarios: list });
  servers.push(server);
  const cascadeId = server.engine.activeConversationId;
  const consumer = await startStreamOnlyConsumer(server, cascadeId);
  consumers.push(consumer);
  return { server, cascadeId, consumer };
}

/** Indices of steps that went through WAITING (the poll projection keeps every status transition). */
async function gateIndices(server: SimServer, cascadeId: string): Promise<number[]> {
  const steps = await pollSteps(server, cascadeId);
  return steps.flatMap((s, i) =>
    (s.metadata.internalMetadata?.statusTransitions ?? []).some((t: Json) => t.updatedStatus === "CORTEX_STEP_STATUS_WAITING") ? [i] : [],
  );
}

/** A re-scan as the facts prescribe: `waitingSteps` names a parked step the consumer never surfaced. */
async function rescanForUnseenGate(server: SimServer, cascadeId: string, seen: number[]): Promise<{ stepIndex: number; step: Json }> {
  const summary = await eventually(
    async () => (await summaries(server))[cascadeId] as Json,
    (s) => ((s.waitingSteps ?? []) as Json[]).some((w) => !seen.includes(w.stepIndex ?? 0)),
    { what: "a parked step the stream never showed" },
  );
  const hit = (summary.waitingSteps as Json[]).find((w) => !seen.includes(w.stepIndex ?? 0)) as Json;
  return { stepIndex: hit.stepIndex ?? 0, step: hit.step };
}

const idle = (e: { type: string; status?: string }): boolean => e.type === "status" && e.status === "idle";

describe("gates on the stream", () => {
  it.each(gated.map((s) => [s.name, s] as const))(
    "%s: a stream-only consumer sees one interaction_requested per streamed gate; a silent gate only a re-scan finds",
    async (_name, scenario) => {
      const { server, cascadeId, consumer } = await world();
      const gates = scenario.steps.filter(isGate);
      await sendTurn(server, cascadeId, turnText(scenario));
      const foundByRescan: number[] = [];
      for (const [position, gate] of gates.entries()) {
        if (!isSilent(gate)) continue;
        // The streamed gates before this one reach the consumer first (it answers them itself).
        const before = gates.slice(0, position).filter((g) => !isSilent(g)).length;
        if (before > 0) await consumer.until(() => consumer.requested().length >= before, `${before} streamed gate(s)`);
        const seen = [...consumer.requested().map((e) => e.stepIndex), ...foundByRescan];
        const { stepIndex, step } = await rescanForUnseenGate(server, cascadeId, seen);
        foundByRescan.push(stepIndex);
        const trajectoryId = step.metadata.sourceTrajectoryStepInfo.trajectoryId;
        const res = await unary(server.tlsUrl, "HandleCascadeUserInteraction", {
          cascadeId,
          interaction: { trajectoryId, stepIndex, permission: { allow: true } },
        });
        expect(res.status).toBe(200);
      }
      await consumer.until(idle, "the turn's end");
      const streamed = consumer.requested().map((e) => e.stepIndex);
      expect(streamed).toHaveLength(gates.length - gates.filter(isSilent).length);
      expect(new Set(streamed).size).toBe(streamed.length);
      expect([...streamed, ...foundByRescan].sort((a, b) => a - b)).toEqual(await gateIndices(server, cascadeId));
    },
  );

  it("parks the chained command's second gate without a frame: the stream-only consumer misses it, a snapshot re-scan finds it (spike-notes §5.2)", async () => {
    const { server, cascadeId, consumer } = await world();
    await sendTurn(server, cascadeId, "Show git status and recent commits");
    const first = await consumer.until((e) => e.type === "interaction_requested", "the first gate");
    const { stepIndex } = await rescanForUnseenGate(server, cascadeId, [(first as { stepIndex: number }).stepIndex]);
    // The stream carried the step's creation but never its WAITING state.
    const second = consumer.frames.flatMap((f) => {
      const update = f.update.mainTrajectoryUpdate.stepsUpdate;
      return ((update.indices ?? []) as number[]).flatMap((index, i) => (index === stepIndex ? [update.steps[i] as Json] : []));
    });
    expect(second.map((s) => s.status)).toEqual(["CORTEX_STEP_STATUS_PENDING"]);
    expect(consumer.requested().map((e) => e.stepIndex)).toEqual([(first as { stepIndex: number }).stepIndex]);
    // A re-scan through the same mapper surfaces it.
    const rescan = createTrajectoryTracker({ conversationId: cascadeId });
    const batch = rescan.applySnapshot({ steps: await pollSteps(server, cascadeId) });
    // The answered first gate is history (requested and resolved in one batch); only the parked one is open.
    const resolved = new Set(batch.flatMap((e) => (e.type === "interaction_resolved" ? [e.interactionId] : [])));
    const found = batch.filter(
      (e): e is Extract<MapperEvent, { type: "interaction_requested" }> => e.type === "interaction_requested" && !resolved.has(e.interactionId),
    );
    expect(found.map((e) => e.stepIndex)).toEqual([stepIndex]);
    const answer = approve(found[0] as Parameters<typeof approve>[0]);
    expect((await unary(server.tlsUrl, "HandleCascadeUserInteraction", { cascadeId, interaction: answer })).status).toBe(200);
    // After the answer the stream speaks again: the command's output reaches the consumer.
    await consumer.until((e) => e.type === "function_call_output" && e.stepIndex === stepIndex, "the second command's output");
    await consumer.until(idle, "the turn's end");
    expect(consumer.requested()).toHaveLength(1);
  });

  it("streams the second gate like any other when the scenario turns silentGate off", async () => {
    const loud = scenarios.map((s) =>
      s.name === "chained-gates" ? { ...s, steps: s.steps.map((step) => (step.kind === "command" ? { ...step, silentGate: false } : step)) } : s,
    );
    const { server, cascadeId, consumer } = await world(loud);
    await sendTurn(server, cascadeId, "Show git status and recent commits");
    await consumer.until(idle, "the turn's end");
    expect(consumer.requested().map((e) => e.stepIndex)).toEqual(await gateIndices(server, cascadeId));
    expect(consumer.requested()).toHaveLength(2);
  });

  it("replays a silently parked gate as WAITING to a stream opened while it is parked", async () => {
    const { server, cascadeId, consumer } = await world();
    await sendTurn(server, cascadeId, "Show git status and recent commits");
    const first = (await consumer.until((e) => e.type === "interaction_requested", "the first gate")) as { stepIndex: number };
    const { stepIndex } = await rescanForUnseenGate(server, cascadeId, [first.stepIndex]);
    const late = await openStream(server.tlsUrl, { conversationId: cascadeId });
    try {
      const replay = await late.waitForFrame();
      const update = replay.update.mainTrajectoryUpdate.stepsUpdate;
      const step = update.steps[(update.indices as number[]).indexOf(stepIndex)] as Json;
      expect(step.status).toBe("CORTEX_STEP_STATUS_WAITING");
      expect(step.requestedInteraction.permission.resource.target).toBe("git log -n 3 --oneline");
      expect(replay.update.status).toBe("CASCADE_RUN_STATUS_RUNNING");
    } finally {
      late.cancel();
    }
  });
});
