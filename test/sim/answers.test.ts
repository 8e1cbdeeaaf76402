/**
 * How a settled gate records its answer (docs/simulator.md, "Answers"): what
 * was sent, whatever its kind, re-serialised as proto-JSON — zero values left
 * out, as agy's echoes are (spike-notes §1.2, §3.5, §5.7, §11.1) — and what
 * each kind of answer does to a command gate. Plus the retired reactive
 * stream (spike-notes §1.6). All over loopback, read back as raw bytes.
 */
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { AGY_VERSIONS } from "../../src/sim/engine/persona.js";
import type { SimServer } from "../../src/sim/server/server.js";
import { isWaiting, pollSteps, sendTurn, startTestSim, waitForIdle, waitForStep } from "./support/sim-harness.js";
import { openStream, unary, type Json } from "./support/wire-client.js";

let server: SimServer;
let cascadeId: string;

beforeEach(async () => {
  server = await startTestSim();
  cascadeId = server.engine.activeConversationId;
});
afterEach(async () => {
  await server.close();
});

/** Sends `text`, answers its first gate of `type` with `variant` (built from the step's ids), waits for the turn's end. */
async function answerGate(text: string, type: string, variant: Json): Promise<{ index: number; step: Json; raw: string; after: Json[] }> {
  await sendTurn(server, cascadeId, text);
  const { index, steps } = await waitForStep(server, cascadeId, isWaiting(type));
  const trajectoryId = (steps[index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId as string;
  const res = await unary(server.tlsUrl, "HandleCascadeUserInteraction", { cascadeId, interaction: { trajectoryId, stepIndex: index, ...variant } });
  expect(res.status).toBe(200);
  await waitForIdle(server, cascadeId);
  const raw = (await unary(server.tlsUrl, "GetCascadeTrajectorySteps", { cascadeId, stepOffset: index })).text;
  const after = await pollSteps(server, cascadeId);
  return { index, step: after[index] as Json, raw, after };
}

/** The first step's text as agy sends it: the JSON of `steps[0]` in a `stepOffset` page. */
const firstStepText = (raw: string): string => JSON.stringify((JSON.parse(raw) as Json).steps[0]);

describe("the echo of an answer in completedInteractions", () => {
  it("leaves allow:false out of a denied file permission and keeps the rest of what was sent", async () => {
    const { step, raw } = await answerGate("Read my shell profile", "VIEW_FILE", { filePermission: { allow: false, scope: "PERMISSION_SCOPE_ONCE" } });
    expect(firstStepText(raw)).not.toContain('"allow":false');
    expect(step.completedInteractions[0].response.filePermission).toEqual({ scope: "PERMISSION_SCOPE_ONCE" });
    expect(step.viewFile).toBeUndefined();
  });

  it("echoes a command deny as permission:{} with the deny instruction, and records the declined step as DONE without exit code or output", async () => {
    const { index, step, raw, after } = await answerGate("Delete the build directory", "RUN_COMMAND", {
      permission: { allow: false, userDenyInstruction: "use git clean instead" },
    });
    expect(firstStepText(raw)).not.toContain('"allow":false');
    expect(step.completedInteractions[0].response).toEqual({
      trajectoryId: step.metadata.sourceTrajectoryStepInfo.trajectoryId,
      stepIndex: index,
      permission: { userDenyInstruction: "use git clean instead" },
    });
    expect(step.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(step.permissions.permissionGrants).toEqual([{ resource: { action: "command", target: "rm -rf build" } }]);
    expect(step.runCommand.exitCode).toBeUndefined();
    expect(step.runCommand.combinedOutput).toBeUndefined();
    expect(step.error).toBeUndefined();
    expect((after.at(-1) as Json).plannerResponse.response).toBe("Understood — I did not delete the build directory.");
  });

  it("records a runCommand answer to a permission gate as sent, never rewritten into permission:{}, and runs the command it confirms", async () => {
    const runCommand = { confirm: true, proposedCommandLine: "pwd", submittedCommandLine: "pwd" };
    const { step } = await answerGate("Run pwd", "RUN_COMMAND", { runCommand });
    const response = step.completedInteractions[0].response as Json;
    expect(response.runCommand).toEqual(runCommand);
    expect(response.permission).toBeUndefined();
    expect(step.runCommand.exitCode).toBe(0);
    expect(step.runCommand.combinedOutput.full).toBe("/home/sim/project\n");
    expect(step.permissions.permissionGrants).toEqual([{ resource: { action: "command", target: "pwd" }, allow: true }]);
  });

  it("declines the command for a runCommand answer without confirm, echoing it without the false", async () => {
    const { step, raw } = await answerGate("Delete the build directory", "RUN_COMMAND", {
      runCommand: { confirm: false, proposedCommandLine: "rm -rf build", submittedCommandLine: "rm -rf build" },
    });
    expect(firstStepText(raw)).not.toContain("confirm");
    expect(step.completedInteractions[0].response.runCommand).toEqual({ proposedCommandLine: "rm -rf build", submittedCommandLine: "rm -rf build" });
    expect(step.runCommand.exitCode).toBeUndefined();
  });

  it("accepts an answer of another kind on the ids alone, records it as sent and declines the command (spike-notes §3.5)", async () => {
    const askQuestion = { responses: [{ question: "Run it?", selectedOptionIds: ["1"] }] };
    const { step } = await answerGate("Delete the build directory", "RUN_COMMAND", { askQuestion });
    expect(step.completedInteractions[0].response.askQuestion).toEqual(askQuestion);
    expect(step.completedInteractions[0].response.permission).toBeUndefined();
    expect(step.runCommand.exitCode).toBeUndefined();
  });

  it("drops empty lists from a skipped question's echo, as proto-JSON does", async () => {
    const { step, raw } = await answerGate("Help me start a project", "ASK_QUESTION", { askQuestion: { responses: [] } });
    expect(firstStepText(raw)).not.toContain('"responses":[]');
    expect(step.completedInteractions[0].response.askQuestion).toEqual({});
  });
});

describe("StreamCascadeReactiveUpdates", () => {
  it.each(AGY_VERSIONS)("%s: answers 'reactive state is deprecated' in the stream's end frame, never data (spike-notes §1.6)", async (agyVersion) => {
    const persona = await startTestSim({ agyVersion });
    onTestFinished(() => persona.close());
    const reader = await openStream(persona.tlsUrl, { conversationId: persona.engine.activeConversationId }, {}, "StreamCascadeReactiveUpdates");
    const end = await reader.ended;
    expect(reader.status).toBe(200);
    expect(reader.contentType).toBe("application/connect+json");
    expect(reader.frames).toEqual([]);
    expect(end.trailer).toEqual({ error: { code: "unknown", message: "reactive state is deprecated" } });
  });
});
