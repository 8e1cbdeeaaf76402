/**
 * Differences a real agy client found between agy and the simulator, each
 * checked over the wire: the requested model, full usage counts, sub-agents,
 * failures where agy's schema puts them, a gate of a variant other than
 * permission/askQuestion, and user text that looks like a replacement pattern.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTrajectoryTracker, type MapperEvent } from "../../src/mapper/index.js";
import type { SimServer } from "../../src/sim/server/server.js";
import { isWaiting, pollSteps, sendTurn, startTestSim, summaries, waitForIdle, waitForStep } from "./support/sim-harness.js";
import { eventually, openStream, unary, type Json } from "./support/wire-client.js";

let server: SimServer;
let cascadeId: string;

beforeEach(async () => {
  server = await startTestSim();
  cascadeId = server.engine.activeConversationId;
});
afterEach(async () => {
  await server.close();
});

const ofType = (steps: Json[], type: string): Json[] => steps.filter((s) => s.type === `CORTEX_STEP_TYPE_${type}`);
const interact = (interaction: Json) => unary(server.tlsUrl, "HandleCascadeUserInteraction", { cascadeId, interaction });

describe("the requested model and usage (spike-notes §3.8, §4.8)", () => {
  it("runs a SendUserCascadeMessage turn on its planModel: USER_INPUT, planner and modelUsage say M71", async () => {
    await sendTurn(server, cascadeId, "Say hello in one short sentence.", "MODEL_PLACEHOLDER_M71");
    await waitForIdle(server, cascadeId);
    const steps = await pollSteps(server, cascadeId);
    const user = ofType(steps, "USER_INPUT")[0] as Json;
    const planner = ofType(steps, "PLANNER_RESPONSE")[0] as Json;
    expect(user.userInput.userConfig.plannerConfig.planModel).toBe("MODEL_PLACEHOLDER_M71");
    expect(planner.metadata.generatorModel).toBe("MODEL_PLACEHOLDER_M71");
    expect(planner.metadata.requestedModel).toEqual({ model: "MODEL_PLACEHOLDER_M71" });
    expect(planner.metadata.modelUsage.model).toBe("MODEL_PLACEHOLDER_M71");
    // A later turn typed in the TUI keeps the conversation's model, as a /model switch would.
    server.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    const second = await waitForStep(
      server,
      cascadeId,
      (s, i) => i > steps.length && s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE" && s.status === "CORTEX_STEP_STATUS_DONE",
    );
    expect((second.steps[second.index] as Json).metadata.modelUsage.model).toBe("MODEL_PLACEHOLDER_M71");
  });

  it("reports thinking and cache-read tokens in modelUsage, which the mapper's usage events carry", async () => {
    await sendTurn(server, cascadeId, "Think about caching");
    await waitForIdle(server, cascadeId);
    const steps = await pollSteps(server, cascadeId);
    const usage = (ofType(steps, "PLANNER_RESPONSE").at(-1) as Json).metadata.modelUsage as Json;
    for (const field of ["inputTokens", "outputTokens", "thinkingOutputTokens", "responseOutputTokens", "cacheReadTokens"]) {
      expect(usage[field], field).toMatch(/^[1-9]\d*$/);
    }
    expect(Number(usage.outputTokens)).toBe(Number(usage.thinkingOutputTokens) + Number(usage.responseOutputTokens));
    const events = createTrajectoryTracker({ conversationId: cascadeId }).applySnapshot({ steps });
    const last = events.filter((e): e is Extract<MapperEvent, { type: "usage" }> => e.type === "usage").at(-1);
    expect(last?.thinkingOutputTokens).toBe(Number(usage.thinkingOutputTokens));
    expect(last?.cacheReadTokens).toBe(Number(usage.cacheReadTokens));
  });
});

describe("sub-agents (spike-notes §3.11, §4.3, §4.11)", () => {
  it("plays an INVOKE_SUBAGENT step whose child is its own conversation with parentConversationId, and finishes after the child", async () => {
    const reader = await openStream(server.tlsUrl, { conversationId: cascadeId });
    try {
      await sendTurn(server, cascadeId, "Research the test setup with a subagent");
      const parentSummary = await waitForIdle(server, cascadeId);
      const steps = await pollSteps(server, cascadeId);
      const invoke = ofType(steps, "INVOKE_SUBAGENT")[0] as Json;
      expect(invoke.status).toBe("CORTEX_STEP_STATUS_DONE");
      expect(invoke.invokeSubagent.subagents).toEqual([{ typeName: "researcher", role: "Find how the tests are run" }]);
      const childId = invoke.invokeSubagent.results[0].conversationId as string;
      expect(childId).not.toBe(cascadeId);
      expect(invoke.metadata.toolCall.name).toBe("invoke_subagent");

      const all = await summaries(server);
      const child = all[childId] as Json;
      expect(child.trajectoryType).toBe(parentSummary.trajectoryType);
      expect(child.trajectoryMetadata).toMatchObject({
        rootConversationId: cascadeId,
        parentConversationId: cascadeId,
        nestingDepth: 1,
        subagentSpec: { typeName: "researcher", role: "Find how the tests are run" },
      });
      expect(parentSummary.trajectoryMetadata.parentConversationId).toBeUndefined();
      // What would fool a /clear detector: a sibling cascade with newer user input than the bound one.
      expect(Date.parse(child.lastUserInputTime)).toBeGreaterThanOrEqual(Date.parse(parentSummary.lastUserInputTime));
      expect(server.engine.activeConversationId).toBe(cascadeId);
      const meta = await unary(server.tlsUrl, "GetConversationMetadata", { conversationId: childId });
      expect(meta.json.metadata.rootConversationId).toBe(cascadeId);

      const childSteps = await pollSteps(server, childId);
      expect(childSteps.map((s) => s.type.replace("CORTEX_STEP_TYPE_", ""))).toEqual([
        "USER_INPUT",
        "CONVERSATION_HISTORY",
        "PLANNER_RESPONSE",
        "LIST_DIRECTORY",
        "PLANNER_RESPONSE",
      ]);
      expect((childSteps[0] as Json).userInput.userResponse).toBe("Find how the tests in this project are run.");
      const childDone = Date.parse((childSteps.at(-1) as Json).metadata.completedAt);
      expect(Date.parse(invoke.metadata.completedAt)).toBeGreaterThanOrEqual(childDone);

      // The stream showed the step RUNNING with the child's id before it finished.
      await reader.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE", 1);
      const streamed = reader.frames.flatMap((f) => (f.update.mainTrajectoryUpdate.stepsUpdate.steps ?? []) as Json[]);
      const running = streamed.filter((s) => s.type === "CORTEX_STEP_TYPE_INVOKE_SUBAGENT" && s.status === "CORTEX_STEP_STATUS_RUNNING");
      expect(running.some((s) => s.invokeSubagent.results?.[0]?.conversationId === childId)).toBe(true);
    } finally {
      reader.cancel();
    }
  });
});

describe("failures as agy's schema carries them (spike-notes §11)", () => {
  it("plays an ERROR_MESSAGE step with errorMessage { error, shouldShowUser } and goes on", async () => {
    await sendTurn(server, cascadeId, "Read the missing config");
    await waitForIdle(server, cascadeId);
    const steps = await pollSteps(server, cascadeId);
    const failure = ofType(steps, "ERROR_MESSAGE")[0] as Json;
    expect(failure.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(failure.errorMessage).toEqual({
      error: {
        userErrorMessage: "config.yaml could not be read: no such file.",
        shortError: "file not found",
        fullError: "open /home/sim/project/config.yaml: no such file or directory",
      },
      shouldShowUser: true,
    });
    expect((steps.at(-1) as Json).plannerResponse.response).toBe("There is no config.yaml yet, so I used the defaults.");
  });
});

describe("a filePermission gate (spike-notes §11, §3.5)", () => {
  it("waits with requestedInteraction.filePermission and accepts interaction.filePermission { allow, scope }", async () => {
    await sendTurn(server, cascadeId, "Read my shell profile");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("VIEW_FILE"));
    const waiting = steps[index] as Json;
    expect(waiting.requestedInteraction).toEqual({ filePermission: { absolutePathUri: "file:///home/sim/.bashrc" } });
    const trajectoryId = waiting.metadata.sourceTrajectoryStepInfo.trajectoryId;
    const answer = { trajectoryId, stepIndex: index, filePermission: { allow: true, scope: "PERMISSION_SCOPE_ONCE" } };
    expect((await interact(answer)).status).toBe(200);
    await waitForIdle(server, cascadeId);
    const after = await pollSteps(server, cascadeId);
    const done = after[index] as Json;
    expect(done.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(done.viewFile.absolutePathUri).toBe("file:///home/sim/.bashrc");
    expect(done.completedInteractions[0].response).toEqual(answer);
    expect((after.at(-1) as Json).plannerResponse.response).toBe("Your shell profile sets PATH and two aliases.");
  });

  it("reads nothing and ends the turn when the file permission is denied", async () => {
    await sendTurn(server, cascadeId, "Read my shell profile");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("VIEW_FILE"));
    const trajectoryId = (steps[index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
    expect((await interact({ trajectoryId, stepIndex: index, filePermission: {} })).status).toBe(200);
    await waitForIdle(server, cascadeId);
    const after = await pollSteps(server, cascadeId);
    expect((after[index] as Json).viewFile).toBeUndefined();
    expect((after.at(-1) as Json).plannerResponse.response).toBe("I was not allowed to read ~/.bashrc, so I left it alone.");
  });
});

describe("user text in scenario templates", () => {
  it("puts $&, $` and $' from the user's text into {{input}} literally, never as replacement patterns", async () => {
    const text = "price: $& then $` and $' and $$";
    await sendTurn(server, cascadeId, text);
    await waitForIdle(server, cascadeId);
    const planner = await eventually(
      async () => ofType(await pollSteps(server, cascadeId), "PLANNER_RESPONSE").at(-1) as Json,
      (s) => s?.status === "CORTEX_STEP_STATUS_DONE",
      { what: "the echo planner" },
    );
    expect(planner.plannerResponse.response).toBe(`You said: ${text}`);
  });
});
