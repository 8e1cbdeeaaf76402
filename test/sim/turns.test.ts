import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SimServer } from "../../src/sim/server/server.js";
import { isWaiting, pollSteps, sendTurn, startTestSim, waitForIdle, waitForStep } from "./support/sim-harness.js";
import { ManualTimeouts } from "./support/manual-timeouts.js";
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

const interact = (interaction: Json) => unary(server.tlsUrl, "HandleCascadeUserInteraction", { cascadeId, interaction });

describe("scenario turns over RPC", () => {
  it("records a USER_INPUT without stepIndex, then streams a planner to DONE with response == modifiedResponse (spike-notes §4.3)", async () => {
    server.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    await waitForIdle(server, cascadeId);
    const steps = await pollSteps(server, cascadeId);
    expect(steps.map((s) => s.type)).toEqual([
      "CORTEX_STEP_TYPE_USER_INPUT",
      "CORTEX_STEP_TYPE_CONVERSATION_HISTORY",
      "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
      "CORTEX_STEP_TYPE_CHECKPOINT",
    ]);
    const [user, , planner] = steps as [Json, Json, Json];
    expect(user.metadata.sourceTrajectoryStepInfo.stepIndex).toBeUndefined();
    expect(user.userInput.userResponse).toBe("Say hello in one short sentence.");
    expect(planner.metadata.sourceTrajectoryStepInfo.stepIndex).toBe(2);
    expect(planner.plannerResponse.response).toBe("Hello! I am the simulated agy, ready to help with your code.");
    expect(planner.plannerResponse.modifiedResponse).toBe(planner.plannerResponse.response);
    expect(planner.metadata.internalMetadata.statusTransitions.map((t: Json) => t.updatedStatus)).toEqual([
      "CORTEX_STEP_STATUS_GENERATING",
      "CORTEX_STEP_STATUS_DONE",
    ]);
    expect(planner.metadata.executionId).toBe(user.metadata.executionId);
    expect(planner.metadata.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    expect(planner.metadata.modelUsage.inputTokens).toMatch(/^\d+$/);
  });

  it("runs the command after a permission allow and echoes the answer in completedInteractions (spike-notes §3.5, §5.7)", async () => {
    await sendTurn(server, cascadeId, "Run pwd");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("RUN_COMMAND"));
    const waiting = steps[index] as Json;
    expect(waiting.requestedInteraction.permission.resource).toEqual({ action: "command", target: "pwd" });
    expect(waiting.runCommand.exitCode).toBeUndefined();
    const trajectoryId = waiting.metadata.sourceTrajectoryStepInfo.trajectoryId as string;
    const res = await interact({ trajectoryId, stepIndex: index, permission: { allow: true } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({});
    await waitForIdle(server, cascadeId);
    const done = (await pollSteps(server, cascadeId))[index] as Json;
    expect(done.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(done.runCommand.exitCode).toBe(0);
    expect(done.runCommand.combinedOutput.full).toBe("/home/sim/project\n");
    expect(done.permissions.permissionGrants).toEqual([{ resource: { action: "command", target: "pwd" }, allow: true }]);
    expect(done.completedInteractions[0].response).toEqual({ trajectoryId, stepIndex: index, permission: { allow: true } });
    expect(done.metadata.internalMetadata.statusTransitions.map((t: Json) => t.updatedStatus)).toEqual([
      "CORTEX_STEP_STATUS_PENDING",
      "CORTEX_STEP_STATUS_WAITING",
      "CORTEX_STEP_STATUS_RUNNING",
      "CORTEX_STEP_STATUS_DONE",
    ]);
  });

  it("declines a denied command without output and lets the planner follow (spike-notes §5.8)", async () => {
    await sendTurn(server, cascadeId, "Delete the build directory");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("RUN_COMMAND"));
    const trajectoryId = (steps[index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
    expect((await interact({ trajectoryId, stepIndex: index, permission: {} })).status).toBe(200);
    await waitForIdle(server, cascadeId);
    const after = await pollSteps(server, cascadeId);
    const declined = after[index] as Json;
    expect(declined.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(declined.runCommand.exitCode).toBeUndefined();
    expect(declined.permissions.permissionGrants[0].allow).toBeUndefined();
    const last = after.at(-1) as Json;
    expect(last.plannerResponse.response).toBe("Understood — I did not delete the build directory.");
    expect(after.filter((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE" && s.plannerResponse.response === "The build directory is gone.")).toEqual([]);
  });

  it("answers 'input not registered for step N' when trajectoryId is not inside interaction (spike-notes §3.5, §1.6)", async () => {
    await sendTurn(server, cascadeId, "Run pwd");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("RUN_COMMAND"));
    const trajectoryId = (steps[index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
    const res = await unary(server.tlsUrl, "HandleCascadeUserInteraction", {
      cascadeId,
      trajectoryId,
      stepIndex: index,
      interaction: { permission: { allow: true } },
    });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ code: "unknown", message: "input not registered for step 0" });
    const wrongStep = await interact({ trajectoryId, stepIndex: index - 1, permission: { allow: true } });
    expect(wrongStep.json.message).toBe(`input not registered for step ${index - 1}`);
    expect(((await pollSteps(server, cascadeId))[index] as Json).status).toBe("CORTEX_STEP_STATUS_WAITING");
  });

  it("targets the retried step when the first prompt timed out (spike-notes §5.3)", async () => {
    const clock = new ManualTimeouts(1_000_000);
    const timed = await startTestSim({ clock, interactionTimeoutMs: 5_000_000 });
    try {
      const id = timed.engine.activeConversationId;
      await unary(timed.tlsUrl, "SendUserCascadeMessage", {
        cascadeId: id,
        items: [{ text: "Run pwd" }],
        cascadeConfig: { plannerConfig: { planModel: "MODEL_PLACEHOLDER_M20" } },
      });
      const first = await waitForStep(timed, id, isWaiting("RUN_COMMAND"));
      const trajectoryId = (first.steps[first.index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
      expect(clock.fireHeld()).toBe(1);
      const retry = await waitForStep(timed, id, (s, i) => i > first.index && isWaiting("RUN_COMMAND")(s));
      expect((retry.steps[first.index] as Json).status).toBe("CORTEX_STEP_STATUS_ERROR");
      expect((retry.steps[retry.index] as Json).requestedInteraction.permission.resource.target).toBe("pwd");
      const stale = await unary(timed.tlsUrl, "HandleCascadeUserInteraction", {
        cascadeId: id,
        interaction: { trajectoryId, stepIndex: first.index, permission: { allow: true } },
      });
      expect(stale.status).toBe(500);
      expect(stale.json.message).toBe(`input not registered for step ${first.index}`);
      const fresh = await unary(timed.tlsUrl, "HandleCascadeUserInteraction", {
        cascadeId: id,
        interaction: { trajectoryId, stepIndex: retry.index, permission: { allow: true } },
      });
      expect(fresh.status).toBe(200);
      const done = await waitForStep(timed, id, (s, i) => i === retry.index && s.status === "CORTEX_STEP_STATUS_DONE");
      expect((done.steps[retry.index] as Json).runCommand.exitCode).toBe(0);
    } finally {
      await timed.close();
    }
  });

  it("offers the second gate of a chained command only after the first is answered (spike-notes §5.2)", async () => {
    await sendTurn(server, cascadeId, "Show git status and recent commits");
    const first = await waitForStep(server, cascadeId, isWaiting("RUN_COMMAND"));
    expect(first.steps.filter(isWaiting("RUN_COMMAND"))).toHaveLength(1);
    expect(first.steps.some((s) => s.runCommand?.commandLine === "git log -n 3 --oneline")).toBe(false);
    const trajectoryId = (first.steps[first.index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
    await interact({ trajectoryId, stepIndex: first.index, permission: { allow: true } });
    const second = await waitForStep(server, cascadeId, (s, i) => i > first.index && isWaiting("RUN_COMMAND")(s));
    expect((second.steps[second.index] as Json).runCommand.commandLine).toBe("git log -n 3 --oneline");
    expect((second.steps[first.index] as Json).status).toBe("CORTEX_STEP_STATUS_DONE");
  });

  it("selects options of a single-select question and records selectedOptionIds (spike-notes §4.3, §5.7)", async () => {
    await sendTurn(server, cascadeId, "Help me start a project");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("ASK_QUESTION"));
    const waiting = steps[index] as Json;
    const question = waiting.askQuestion.questions[0];
    expect(question.options.map((o: Json) => o.id)).toEqual(["1", "2", "3", "4"]);
    expect(waiting.requestedInteraction.askQuestion.questions[0]).toEqual(question);
    expect(JSON.parse(waiting.metadata.toolCall.argumentsJson).questions[0].is_multi_select).toBe(false);
    const trajectoryId = waiting.metadata.sourceTrajectoryStepInfo.trajectoryId;
    const responses = [{ question: question.question, selectedOptionIds: ["2"] }];
    expect((await interact({ trajectoryId, stepIndex: index, askQuestion: { responses } })).status).toBe(200);
    await waitForIdle(server, cascadeId);
    const after = await pollSteps(server, cascadeId);
    const done = after[index] as Json;
    expect(done.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(done.askQuestion.questions[0].selectedOptionIds).toEqual(["2"]);
    expect(done.completedInteractions[0].response.askQuestion).toEqual({ responses });
    expect((after.at(-1) as Json).plannerResponse.response).toBe("Great — let's build A command-line tool.");
  });

  it("accepts several options for a multi-select question flagged only in argumentsJson (spike-notes §4.3)", async () => {
    await sendTurn(server, cascadeId, "Which features should I add?");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("ASK_QUESTION"));
    const waiting = steps[index] as Json;
    expect(JSON.parse(waiting.metadata.toolCall.argumentsJson).questions[0].is_multi_select).toBe(true);
    expect(JSON.stringify(waiting.askQuestion)).not.toContain("multi");
    const question = waiting.askQuestion.questions[0].question;
    await interact({
      trajectoryId: waiting.metadata.sourceTrajectoryStepInfo.trajectoryId,
      stepIndex: index,
      askQuestion: { responses: [{ question, selectedOptionIds: ["1", "3"] }] },
    });
    await waitForIdle(server, cascadeId);
    const after = await pollSteps(server, cascadeId);
    expect((after[index] as Json).askQuestion.questions[0].selectedOptionIds).toEqual(["1", "3"]);
    expect((after.at(-1) as Json).plannerResponse.response).toBe("Adding: Dark mode, Export to CSV.");
  });

  it("treats empty askQuestion responses as a skip (spike-notes §3.5)", async () => {
    await sendTurn(server, cascadeId, "Help me start a project");
    const { index, steps } = await waitForStep(server, cascadeId, isWaiting("ASK_QUESTION"));
    const trajectoryId = (steps[index] as Json).metadata.sourceTrajectoryStepInfo.trajectoryId;
    await interact({ trajectoryId, stepIndex: index, askQuestion: { responses: [] } });
    await waitForIdle(server, cascadeId);
    const after = await pollSteps(server, cascadeId);
    expect((after[index] as Json).askQuestion.questions[0].selectedOptionIds).toBeUndefined();
    expect((after.at(-1) as Json).plannerResponse.response).toBe("No problem, tell me more whenever you are ready.");
  });

  it("ends an error turn with an ERROR planner whose detail is step.error, as agy's schema defines it (spike-notes §11)", async () => {
    await sendTurn(server, cascadeId, "Trigger a model error");
    const summary = await waitForIdle(server, cascadeId);
    const last = (await pollSteps(server, cascadeId)).at(-1) as Json;
    expect(last.type).toBe("CORTEX_STEP_TYPE_PLANNER_RESPONSE");
    expect(last.status).toBe("CORTEX_STEP_STATUS_ERROR");
    expect(last.error).toEqual({
      userErrorMessage: "The model is overloaded. Please try again later.",
      shortError: "model overloaded",
      fullError: "UNAVAILABLE: the model is overloaded (HTTP 503); retry later",
    });
    // The planner body has no error fields in agy's schema.
    expect(Object.keys(last.plannerResponse)).toEqual(["messageId"]);
    expect(summary.waitingSteps).toBeUndefined();
  });

  it("plays read-only tools and a GENERIC tool with their typed bodies (spike-notes §4.3)", async () => {
    await sendTurn(server, cascadeId, "Summarize the project");
    await waitForIdle(server, cascadeId);
    await sendTurn(server, cascadeId, "List my subagents");
    await eventually(server, cascadeId);
    const steps = await pollSteps(server, cascadeId);
    const list = steps.find((s) => s.type === "CORTEX_STEP_TYPE_LIST_DIRECTORY") as Json;
    expect(list.metadata.toolCall.name).toBe("list_dir");
    expect(list.listDirectory.results).toEqual([
      { name: "src", isDir: true },
      { name: "package.json", sizeBytes: "812" },
      { name: "README.md", sizeBytes: "2048" },
    ]);
    const view = steps.find((s) => s.type === "CORTEX_STEP_TYPE_VIEW_FILE") as Json;
    expect(view.viewFile).toEqual({ absolutePathUri: "file:///home/sim/project/package.json", endLine: 30, lineRangeBytes: 812, numLines: 31, numBytes: 812 });
    const generic = steps.find((s) => s.type === "CORTEX_STEP_TYPE_GENERIC") as Json;
    expect(generic.metadata.toolCall.name).toBe("manage_subagents");
    expect(generic.generic.args).toEqual({ Action: "list" });
    expect(generic.generic.result.stepRenderInfo.title).toBe("2 subagents");
  });

  it("streams thinking before the response text for a thinking model (spike-notes §4.3)", async () => {
    const reader = await openStream(server.tlsUrl, { conversationId: cascadeId });
    await sendTurn(server, cascadeId, "Think about caching");
    await reader.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE", 1);
    reader.cancel();
    const planners = reader.frames
      .flatMap((f) => (f.update.mainTrajectoryUpdate.stepsUpdate.steps ?? []) as Json[])
      .filter((step) => step.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE");
    const firstWithText = planners.findIndex((step) => step.plannerResponse.modifiedResponse !== undefined);
    // Frame 0 is the freshly created planner; thinking chunks come next, text after.
    expect(firstWithText).toBeGreaterThan(1);
    for (const step of planners.slice(1, firstWithText)) expect(step.plannerResponse.thinking.length).toBeGreaterThan(0);
    expect(planners[firstWithText]?.plannerResponse.thinking).toBe(planners[firstWithText - 1]?.plannerResponse.thinking);
    const done = (await pollSteps(server, cascadeId)).at(-1) as Json;
    expect(done.plannerResponse.thinking).toBe("The user wants me to reason first. I will consider the options and then answer briefly.");
    expect(done.plannerResponse.response).toBe("After thinking it over: Think about caching — the short answer is yes.");
  });

  it("lists a /clear-minted root beside the old one, with no user-input time until its first turn (spike-notes §3.11, §4.10)", async () => {
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await waitForIdle(server, cascadeId);
    server.engine.tuiPort().clear();
    const fresh = server.engine.activeConversationId;
    expect(fresh).not.toBe(cascadeId);
    const summaries = (await unary(server.tlsUrl, "GetAllCascadeTrajectories", {})).json.trajectorySummaries as Json;
    expect(Object.keys(summaries).sort()).toEqual([cascadeId, fresh].sort());
    expect(summaries[fresh].trajectoryMetadata.rootConversationId).toBe(fresh);
    expect(summaries[fresh].lastUserInputTime).toBeUndefined();
    expect(summaries[fresh].lastModifiedTime).toBeUndefined();
    expect(summaries[cascadeId].lastUserInputTime).toMatch(/Z$/);
  });

  it("stops a parked turn on CancelCascadeInvocation and still plays the queued turn", async () => {
    await sendTurn(server, cascadeId, "Run pwd");
    const { index } = await waitForStep(server, cascadeId, isWaiting("RUN_COMMAND"));
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    expect((await unary(server.tlsUrl, "CancelCascadeInvocation", { cascadeId })).status).toBe(200);
    await waitForStep(server, cascadeId, (s) => s.plannerResponse?.response === "Hello! I am the simulated agy, ready to help with your code.");
    await waitForIdle(server, cascadeId);
    const steps = await pollSteps(server, cascadeId);
    expect((steps[index] as Json).status).toBe("CORTEX_STEP_STATUS_CANCELED");
    expect(steps.filter((s) => s.type === "CORTEX_STEP_TYPE_USER_INPUT")).toHaveLength(2);
  });

  it("falls back to the echo scenario for unmatched text", async () => {
    await sendTurn(server, cascadeId, "what is the airspeed of a swallow");
    await waitForIdle(server, cascadeId);
    const last = (await pollSteps(server, cascadeId)).at(-1) as Json;
    expect(last.plannerResponse.response).toBe("You said: what is the airspeed of a swallow");
  });
});

async function eventually(srv: SimServer, id: string): Promise<void> {
  await waitForStep(srv, id, (s) => s.type === "CORTEX_STEP_TYPE_GENERIC" && s.status === "CORTEX_STEP_STATUS_DONE");
  await waitForIdle(srv, id);
}
