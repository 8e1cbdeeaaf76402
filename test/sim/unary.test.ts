import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import type { SimServer } from "../../src/sim/server/server.js";
import { isWaiting, pollSteps, sendTurn, startTestSim, waitForIdle, waitForStep } from "./support/sim-harness.js";
import { unary, type Json } from "./support/wire-client.js";

let server: SimServer;
let guarded: SimServer;

beforeEach(async () => {
  server = await startTestSim();
  guarded = await startTestSim({ csrfToken: "s3cret-token" });
});
afterEach(async () => {
  await server.close();
  await guarded.close();
});

describe("listeners and transport", () => {
  it("answers Heartbeat on both loopback listeners, over HTTPS/1.1, HTTP/2 and plain HTTP (newer builds: agy 1.1.5)", async () => {
    expect(server.tlsUrl).toBe(`https://127.0.0.1:${server.tlsPort}`);
    expect(server.plainUrl).toBe(`http://127.0.0.1:${server.plainPort}`);
    expect(server.tlsPort).not.toBe(server.plainPort);
    for (const [url, http2] of [
      [server.tlsUrl, false],
      [server.tlsUrl, true],
      [server.plainUrl, false],
    ] as const) {
      const res = await unary(url, "Heartbeat", {}, { http2 });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({});
    }
  });

  it("answers 404 for an unknown method (spike-notes §1.6)", async () => {
    const res = await unary(server.tlsUrl, "StreamCascadeNonsense", {});
    expect(res.status).toBe(404);
  });

  it("refuses a call without the CSRF token with 401 'missing CSRF token' when a token is set (newer builds)", async () => {
    const bare = await unary(guarded.tlsUrl, "Heartbeat", {});
    expect(bare.status).toBe(401);
    expect(bare.json).toEqual({ code: "unauthenticated", message: "missing CSRF token" });
    const wrong = await unary(guarded.plainUrl, "Heartbeat", {}, { headers: { "x-codeium-csrf-token": "nope" } });
    expect(wrong.status).toBe(401);
    const right = await unary(guarded.tlsUrl, "Heartbeat", {}, { headers: { "x-codeium-csrf-token": "s3cret-token" } });
    expect(right.status).toBe(200);
  });
});

describe("conversation methods", () => {
  it("reports the root conversation, or 500 'trajectory not found' (spike-notes §2.6)", async () => {
    const id = server.engine.activeConversationId;
    const res = await unary(server.tlsUrl, "GetConversationMetadata", { conversationId: id });
    expect(res.status).toBe(200);
    // The default persona is agy 1.0.10, recorded answering the root id alone (workspaces: personas.test.ts).
    expect(res.json).toEqual({ metadata: { rootConversationId: id } });
    const missing = await unary(server.tlsUrl, "GetConversationMetadata", { conversationId: "9f1c2d3e-0000-4000-8000-000000000000" });
    expect(missing.status).toBe(500);
    expect(missing.json).toEqual({ code: "unknown", message: "trajectory not found" });
  });

  it("requires a model on SendUserCascadeMessage (spike-notes §3.8)", async () => {
    const res = await unary(server.tlsUrl, "SendUserCascadeMessage", { cascadeId: server.engine.activeConversationId, items: [{ text: "hi" }] });
    expect(res.status).toBe(500);
    expect(res.json.message).toBe("neither PlanModel nor RequestedModel specified");
  });

  it("creates a headless conversation with StartCascade, echoing the chosen id, listed with absent times until its first turn (spike-notes §3.9, §3.11)", async () => {
    const chosen = "0d7f6a52-5b0e-4c4f-9b1e-0a6c2a3b4c5d";
    const res = await unary(server.tlsUrl, "StartCascade", { cascadeId: chosen, source: "CORTEX_TRAJECTORY_SOURCE_CLI" });
    expect(res.json).toEqual({ cascadeId: chosen });
    expect(server.engine.activeConversationId).not.toBe(chosen);
    const minted = await unary(server.tlsUrl, "StartCascade", { source: "CORTEX_TRAJECTORY_SOURCE_CLI" });
    expect(minted.json.cascadeId).toMatch(/^[0-9a-f-]{36}$/);
    const summary = (await unary(server.tlsUrl, "GetAllCascadeTrajectories", {})).json.trajectorySummaries[chosen] as Json;
    expect(summary.trajectoryType).toBe("CORTEX_TRAJECTORY_TYPE_CASCADE");
    expect(summary.trajectoryMetadata.rootConversationId).toBe(chosen);
    expect(summary.status).toBe("CASCADE_RUN_STATUS_IDLE");
    expect(summary.lastUserInputTime).toBeUndefined();
    expect(summary.lastModifiedTime).toBeUndefined();
    expect(summary.trajectoryId).not.toBe(chosen);
    await sendTurn(server, chosen, "Say hello in one short sentence.");
    const after = await waitForIdle(server, chosen);
    expect(after.lastUserInputTime).toMatch(/\.\d{9}Z$/);
    expect(after.stepCount).toBe(4);
  });

  it("serves steps from stepOffset, and the whole trajectory with GetCascadeTrajectory in a newer persona (spike-notes §10.4)", async () => {
    const newer = await startTestSim({ agyVersion: "1.1" });
    onTestFinished(() => newer.close());
    const id = (await unary(newer.tlsUrl, "StartCascade", { source: "CORTEX_TRAJECTORY_SOURCE_CLI" })).json.cascadeId as string;
    await sendTurn(newer, id, "Say hello in one short sentence.");
    await waitForIdle(newer, id);
    const all = await pollSteps(newer, id);
    const tail = await unary(newer.tlsUrl, "GetCascadeTrajectorySteps", { cascadeId: id, stepOffset: 2 });
    expect(tail.json.steps).toEqual(all.slice(2));
    const trajectory = await unary(newer.tlsUrl, "GetCascadeTrajectory", { cascadeId: id });
    expect(trajectory.json.trajectory.cascadeId).toBe(id);
    expect(trajectory.json.trajectory.steps).toEqual(all);
    expect(trajectory.json.numTotalSteps).toBe(4);
    expect(trajectory.json.status).toBe("CASCADE_RUN_STATUS_IDLE");
  });

  it("lists the models wrapped in `response` (spike-notes §3.10)", async () => {
    const res = await unary(server.tlsUrl, "GetAvailableModels", {});
    const models = Object.values(res.json.response.models) as Json[];
    expect(models.some((m) => m.recommended === true && typeof m.model === "string")).toBe(true);
  });

  it("leaves a WAITING step alone on CancelCascadeSteps, answering 200 {} (spike-notes §3.6)", async () => {
    const id = (await unary(server.tlsUrl, "StartCascade", { source: "CORTEX_TRAJECTORY_SOURCE_CLI" })).json.cascadeId as string;
    await sendTurn(server, id, "Run pwd");
    const { index } = await waitForStep(server, id, isWaiting("RUN_COMMAND"));
    const cancel = await unary(server.tlsUrl, "CancelCascadeSteps", { cascadeId: id });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toEqual({});
    const summary = (await unary(server.tlsUrl, "GetAllCascadeTrajectories", {})).json.trajectorySummaries[id] as Json;
    expect(summary.status).toBe("CASCADE_RUN_STATUS_RUNNING");
    expect(summary.waitingSteps).toHaveLength(1);
    expect(summary.waitingSteps[0].step.status).toBe("CORTEX_STEP_STATUS_WAITING");
    expect(((await pollSteps(server, id))[index] as Json).status).toBe("CORTEX_STEP_STATUS_WAITING");
    // ForceStopCascadeTree does stop a parked turn.
    expect((await unary(server.tlsUrl, "ForceStopCascadeTree", { conversationId: id })).status).toBe(200);
    await waitForIdle(server, id);
    expect(((await pollSteps(server, id))[index] as Json).status).toBe("CORTEX_STEP_STATUS_CANCELED");
  });

  it("interrupts a GENERATING planner on CancelCascadeSteps and goes idle", async () => {
    const id = (await unary(server.tlsUrl, "StartCascade", { source: "CORTEX_TRAJECTORY_SOURCE_CLI" })).json.cascadeId as string;
    await sendTurn(server, id, "Write a long essay about servers");
    await waitForStep(server, id, (s) => s.status === "CORTEX_STEP_STATUS_GENERATING");
    await unary(server.tlsUrl, "CancelCascadeSteps", { cascadeId: id });
    await waitForIdle(server, id);
    const planner = (await pollSteps(server, id)).find((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE") as Json;
    expect(planner.status).toBe("CORTEX_STEP_STATUS_CANCELED");
    expect(planner.plannerResponse.response).toBeUndefined();
  });

  it("rejects a non-JSON unary body with 400 invalid_argument", async () => {
    const res = await unary(server.tlsUrl, "Heartbeat", {}, { rawBody: Buffer.from("{not json") });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("invalid_argument");
  });

  it("refuses an interaction whose stepIndex is not a non-negative integer with 400 invalid_argument, and leaves the gate parked", async () => {
    const id = server.engine.activeConversationId;
    await sendTurn(server, id, "Run pwd");
    const { index, steps } = await waitForStep(server, id, isWaiting("RUN_COMMAND"));
    const trajectoryId = (steps[index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
    for (const stepIndex of [-1, "-5", "123456789012345678901", 1.5]) {
      const res = await unary(server.tlsUrl, "HandleCascadeUserInteraction", {
        cascadeId: id,
        interaction: { trajectoryId, stepIndex, permission: { allow: true } },
      });
      expect(res.status, String(stepIndex)).toBe(400);
      expect(res.json.code).toBe("invalid_argument");
    }
    expect(((await pollSteps(server, id))[index] as Json).status).toBe("CORTEX_STEP_STATUS_WAITING");
    const digits = await unary(server.tlsUrl, "HandleCascadeUserInteraction", {
      cascadeId: id,
      interaction: { trajectoryId, stepIndex: String(index), permission: { allow: true } },
    });
    expect(digits.status).toBe(200);
  });
});
