import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import type { SimServer } from "../../src/sim/server/server.js";
import { pollSteps, sendTurn, startTestSim, waitForIdle } from "./support/sim-harness.js";
import { eventually, openStream, unary, type Json, type StreamReader } from "./support/wire-client.js";

let server: SimServer;
let cascadeId: string;
const open: StreamReader[] = [];

beforeEach(async () => {
  server = await startTestSim();
  cascadeId = server.engine.activeConversationId;
});
afterEach(async () => {
  for (const stream of open.splice(0)) stream.cancel();
  await server.close();
});

async function stream(request: Json, options: Parameters<typeof openStream>[2] = {}, baseUrl = server.tlsUrl): Promise<StreamReader> {
  const reader = await openStream(baseUrl, request, options);
  open.push(reader);
  return reader;
}

const stepsOf = (frame: Json): Json[] => frame.update.mainTrajectoryUpdate.stepsUpdate.steps ?? [];
const indicesOf = (frame: Json): number[] => frame.update.mainTrajectoryUpdate.stepsUpdate.indices ?? [];

describe("StreamAgentStateUpdates", () => {
  it("answers a bare-JSON stream request with agy's 'promised N bytes' error frame (spike-notes §1.5)", async () => {
    const bare = Buffer.from(JSON.stringify({ conversationId: cascadeId }));
    const reader = await stream({}, { rawBody: bare });
    const end = await reader.ended;
    expect(reader.status).toBe(200);
    expect(reader.contentType).toBe("application/connect+json");
    expect(reader.frames).toEqual([]);
    expect(end.kind).toBe("clean");
    expect(end.trailer).toEqual({
      error: {
        code: "invalid_argument",
        message: `protocol error: promised ${bare.readUInt32BE(1)} bytes in enveloped message, got ${bare.byteLength - 5} bytes`,
      },
    });
  });

  it("replays the existing steps in the first frame with indices and totalLength (newer builds: stepsUpdate)", async () => {
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await waitForIdle(server, cascadeId);
    const reader = await stream({ conversationId: cascadeId, subscriberId: "replay" });
    const first = await reader.waitForFrame();
    expect(first.update.conversationId).toBe(cascadeId);
    expect(first.update.status).toBe("CASCADE_RUN_STATUS_IDLE");
    // agy 1.0.10 (the default persona) sends no fullyIdle (spike-notes §11.5; personas.test.ts).
    expect(Object.keys(first.update).sort()).toEqual(["conversationId", "mainTrajectoryUpdate", "status", "trajectoryId"]);
    expect(first.update.mainTrajectoryUpdate.stepsUpdate.totalLength).toBe(4);
    expect(indicesOf(first)).toEqual([0, 1, 2, 3]);
    const planner = stepsOf(first)[2] as Json;
    // Stream projection: no internalMetadata, and a DONE planner carries only modifiedResponse (spike-notes §3.4).
    expect(planner.metadata.internalMetadata).toBeUndefined();
    expect(planner.plannerResponse.response).toBeUndefined();
    expect(planner.plannerResponse.modifiedResponse).toBe("Hello! I am the simulated agy, ready to help with your code.");
    expect(first.update.trajectoryId).toBe(planner.metadata.sourceTrajectoryStepInfo.trajectoryId);
  });

  it("honours initialStepsPageBounds for the replay in a newer persona (clients 1.1–1.2)", async () => {
    const newer = await startTestSim({ agyVersion: "1.1" });
    onTestFinished(() => newer.close());
    const newerId = newer.engine.activeConversationId;
    await sendTurn(newer, newerId, "Say hello in one short sentence.");
    await waitForIdle(newer, newerId);
    const reader = await stream({ conversationId: newerId, initialStepsPageBounds: { startIndex: 2, endIndexExclusive: 3 } }, {}, newer.tlsUrl);
    const first = await reader.waitForFrame();
    expect(indicesOf(first)).toEqual([2]);
    expect(stepsOf(first)[0]?.type).toBe("CORTEX_STEP_TYPE_PLANNER_RESPONSE");
    expect(first.update.mainTrajectoryUpdate.stepsUpdate.totalLength).toBe(4);
  });

  it("sends only changed steps later, with a GENERATING planner whose modifiedResponse grows and has no response (spike-notes §4.3, §4.5)", async () => {
    const reader = await stream({ conversationId: cascadeId });
    const empty = await reader.waitForFrame();
    expect(indicesOf(empty)).toEqual([]);
    expect(empty.update.status).toBe("CASCADE_RUN_STATUS_IDLE");
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await reader.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE", 2);
    const plannerFrames = reader.frames.filter((f) => stepsOf(f).some((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE"));
    const generating = plannerFrames
      .map((f) => stepsOf(f).find((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE") as Json)
      .filter((s) => s.status === "CORTEX_STEP_STATUS_GENERATING");
    expect(generating.length).toBeGreaterThan(1);
    for (const step of generating) expect(step.plannerResponse.response).toBeUndefined();
    const texts = generating.map((s) => s.plannerResponse.modifiedResponse ?? "");
    for (let i = 1; i < texts.length; i += 1) expect(texts[i]!.startsWith(texts[i - 1]!)).toBe(true);
    for (const frame of reader.frames.slice(1)) {
      expect(indicesOf(frame).length).toBe(stepsOf(frame).length);
      expect(indicesOf(frame).length).toBeLessThanOrEqual(2);
    }
    const running = reader.frames.find((f) => f.update.status === "CASCADE_RUN_STATUS_RUNNING") as Json;
    expect(running.update.fullyIdle).toBeUndefined();
  });

  it("streams a gate's move to WAITING in one frame, nothing while it is parked, then the answered step (spike-notes §5.2)", async () => {
    const reader = await stream({ conversationId: cascadeId });
    await reader.waitForFrame();
    await sendTurn(server, cascadeId, "Run pwd");
    const parked = await reader.waitForFrame((f) => stepsOf(f).some((s) => s.status === "CORTEX_STEP_STATUS_WAITING"));
    const parkedAt = reader.frames.indexOf(parked);
    const index = indicesOf(parked)[0] as number;
    const waiting = stepsOf(parked)[0] as Json;
    expect(indicesOf(parked)).toHaveLength(1);
    expect(waiting.type).toBe("CORTEX_STEP_TYPE_RUN_COMMAND");
    expect(waiting.requestedInteraction.permission.resource).toEqual({ action: "command", target: "pwd" });
    // The run status stays RUNNING while the gate is parked (spike-notes §3.11).
    expect(parked.update.status).toBe("CASCADE_RUN_STATUS_RUNNING");
    const summary = (await unary(server.tlsUrl, "GetAllCascadeTrajectories", {})).json.trajectorySummaries[cascadeId];
    expect(summary.waitingSteps[0].stepIndex).toBe(index);
    const trajectoryId = waiting.metadata.sourceTrajectoryStepInfo.trajectoryId as string;
    const answer = await unary(server.tlsUrl, "HandleCascadeUserInteraction", {
      cascadeId,
      interaction: { trajectoryId, stepIndex: index, permission: { allow: true } },
    });
    expect(answer.status).toBe(200);
    const done = await reader.waitForFrame(
      (f) => stepsOf(f).some((s) => s.type === "CORTEX_STEP_TYPE_RUN_COMMAND" && s.status === "CORTEX_STEP_STATUS_DONE"),
      parkedAt + 1,
    );
    // Nothing came between parking and the answer: the very next frame is the step leaving WAITING.
    const next = reader.frames[parkedAt + 1] as Json;
    expect(indicesOf(next)).toEqual([index]);
    expect(stepsOf(next)[0]?.status).toBe("CORTEX_STEP_STATUS_RUNNING");
    const statuses = reader.frames.flatMap((f) =>
      stepsOf(f)
        .filter((s) => s.type === "CORTEX_STEP_TYPE_RUN_COMMAND")
        .map((s) => s.status),
    );
    expect(statuses).toEqual(["CORTEX_STEP_STATUS_PENDING", "CORTEX_STEP_STATUS_WAITING", "CORTEX_STEP_STATUS_RUNNING", "CORTEX_STEP_STATUS_DONE"]);
    const step = stepsOf(done).find((s) => s.type === "CORTEX_STEP_TYPE_RUN_COMMAND") as Json;
    expect(step.metadata.toolCall).toBeUndefined();
    expect(step.runCommand.combinedOutput.full).toBe("/home/sim/project\n");
  });

  it("keeps a GENERIC step's toolCall without argumentsJson and strips planner toolCalls (spike-notes §3.4)", async () => {
    const reader = await stream({ conversationId: cascadeId });
    await sendTurn(server, cascadeId, "List my subagents");
    const frame = await reader.waitForFrame((f) => stepsOf(f).some((s) => s.type === "CORTEX_STEP_TYPE_GENERIC" && s.status === "CORTEX_STEP_STATUS_DONE"));
    const generic = stepsOf(frame).find((s) => s.type === "CORTEX_STEP_TYPE_GENERIC") as Json;
    expect(Object.keys(generic.metadata.toolCall).sort()).toEqual(["id", "name", "originalName", "thinkingSignature"]);
    const dispatch = reader.frames
      .flatMap(stepsOf)
      .find((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE" && s.status === "CORTEX_STEP_STATUS_DONE") as Json;
    expect(Object.keys(dispatch.plannerResponse).sort()).toEqual(["messageId", "stopReason"]);
    const polled = (await pollSteps(server, cascadeId)).find((s) => s.type === "CORTEX_STEP_TYPE_GENERIC") as Json;
    expect(typeof polled.metadata.toolCall.argumentsJson).toBe("string");
  });

  it("closes the earlier subscription when a subscriberId is reused (newer builds)", async () => {
    const first = await stream({ conversationId: cascadeId, subscriberId: "bot-1" });
    await first.waitForFrame();
    const second = await stream({ conversationId: cascadeId, subscriberId: "bot-1" });
    await second.waitForFrame();
    const end = await first.ended;
    expect(end.kind).toBe("clean");
    expect(end.trailer?.error?.message).toBe("subscription closed by repeat id");
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await second.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_RUNNING");
  });

  it("streams over HTTP/2 and over the plain HTTP listener alike (newer builds: both listeners answer)", async () => {
    const h2 = await stream({ conversationId: cascadeId }, { http2: true });
    const plain = await stream({ conversationId: cascadeId }, {}, server.plainUrl);
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    for (const reader of [h2, plain]) {
      const frame = await reader.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE", 1);
      expect(frame.update.mainTrajectoryUpdate.stepsUpdate.totalLength).toBe(4);
    }
  });

  it("counts the streams following each conversation in openStreams, and forgets one once its client goes", async () => {
    expect(server.openStreams(cascadeId)).toBe(0);
    const a = await stream({ conversationId: cascadeId });
    const b = await stream({ conversationId: cascadeId }, { http2: true });
    await Promise.all([a.waitForFrame(), b.waitForFrame()]);
    expect(server.openStreams(cascadeId)).toBe(2);
    const other = (await unary(server.tlsUrl, "StartCascade", { source: "CORTEX_TRAJECTORY_SOURCE_CLI" })).json.cascadeId as string;
    expect(server.openStreams(other)).toBe(0);
    a.cancel();
    await eventually(
      async () => server.openStreams(cascadeId),
      (n) => n === 1,
      { what: "the cancelled stream to be forgotten" },
    );
    b.cancel();
    await eventually(
      async () => server.openStreams(cascadeId),
      (n) => n === 0,
      { what: "both streams to be forgotten" },
    );
  });

  it("ends the stream with a 'trajectory not found' error for an unknown conversation", async () => {
    const reader = await stream({ conversationId: "00000000-0000-4000-8000-000000000000" });
    const end = await reader.ended;
    expect(end.trailer?.error).toEqual({ code: "unknown", message: "trajectory not found" });
  });
});
