/**
 * The simulator's steps have the same shapes as agy's real ones: each test
 * compares key sets (not values) of a generated step with a capture from
 * fixtures/captures/agy-1.0.10 (spike-notes §8), for the poll projection
 * (GetCascadeTrajectorySteps) and the stream projection (frames) alike.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimServer } from "../../src/sim/server/server.js";
import { isWaiting, pollSteps, sendTurn, startTestSim, waitForIdle, waitForStep } from "./support/sim-harness.js";
import { openStream, unary, type Json, type StreamReader } from "./support/wire-client.js";

const CAPTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "captures", "agy-1.0.10");
const capture = (name: string): Json => JSON.parse(readFileSync(join(CAPTURES, `${name}.json`), "utf8")) as Json;

/** Keys of `value`, minus fields that differ between agy builds (named where used). */
const keys = (value: unknown, ignore: string[] = []): string[] =>
  Object.keys((value ?? {}) as object)
    .filter((k) => !ignore.includes(k))
    .sort();

let server: SimServer;
let cascadeId: string;
let reader: StreamReader;
let polled: Json[] = [];
let askWaiting: Json;
let runWaiting: Json;
const streamed = new Map<number, Json>();

const find = (steps: Iterable<Json>, type: string, pred: (s: Json) => boolean = () => true): Json => {
  const hit = [...steps].find((s) => s.type === `CORTEX_STEP_TYPE_${type}` && pred(s));
  if (hit === undefined) throw new Error(`no ${type} step`);
  return hit;
};

beforeAll(async () => {
  server = await startTestSim();
  cascadeId = server.engine.activeConversationId;
  reader = await openStream(server.tlsUrl, { conversationId: cascadeId });
  const answer = async (interaction: Json) => unary(server.tlsUrl, "HandleCascadeUserInteraction", { cascadeId, interaction });

  await sendTurn(server, cascadeId, "Say hello in one short sentence.");
  await waitForIdle(server, cascadeId);

  await sendTurn(server, cascadeId, "Run pwd");
  let wait = await waitForStep(server, cascadeId, isWaiting("RUN_COMMAND"));
  runWaiting = wait.steps[wait.index] as Json;
  await answer({ trajectoryId: runWaiting.metadata.sourceTrajectoryStepInfo.trajectoryId, stepIndex: wait.index, permission: { allow: true } });
  await eventuallyIdle(wait.index);

  await sendTurn(server, cascadeId, "Check the node version");
  await eventuallyIdle();

  await sendTurn(server, cascadeId, "Help me start a project");
  wait = await waitForStep(server, cascadeId, isWaiting("ASK_QUESTION"));
  askWaiting = wait.steps[wait.index] as Json;
  const question = askWaiting.askQuestion.questions[0].question;
  await answer({
    trajectoryId: askWaiting.metadata.sourceTrajectoryStepInfo.trajectoryId,
    stepIndex: wait.index,
    askQuestion: { responses: [{ question, selectedOptionIds: ["4"] }] },
  });
  await eventuallyIdle(wait.index);

  await sendTurn(server, cascadeId, "List my subagents");
  await eventuallyIdle();
  await sendTurn(server, cascadeId, "Summarize the project");
  await eventuallyIdle();

  polled = await pollSteps(server, cascadeId);
  const total = polled.length;
  await reader.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE" && f.update.mainTrajectoryUpdate.stepsUpdate.totalLength === total);
  for (const frame of reader.frames) {
    const update = frame.update.mainTrajectoryUpdate.stepsUpdate;
    (update.indices ?? []).forEach((index: number, i: number) => streamed.set(index, update.steps[i]));
  }
});

afterAll(async () => {
  reader?.cancel();
  await server?.close();
});

/** Waits until the turn is over (and, when given, step `index` is no longer WAITING). */
async function eventuallyIdle(index?: number): Promise<void> {
  const before = (await pollSteps(server, cascadeId)).length;
  await waitForStep(
    server,
    cascadeId,
    (s, i) => i >= before - 1 && s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE" && s.status === "CORTEX_STEP_STATUS_DONE" && (index === undefined || i > index),
  );
  await waitForIdle(server, cascadeId);
}

describe("generated steps match agy's captured shapes", () => {
  it("USER_INPUT: no stepIndex, executionId, userInput fields (user_input.json)", () => {
    const real = capture("user_input");
    const mine = polled[0] as Json;
    expect(keys(mine)).toEqual(keys(real));
    expect(keys(mine.metadata)).toEqual(keys(real.metadata));
    expect(keys(mine.metadata.sourceTrajectoryStepInfo)).toEqual(keys(real.metadata.sourceTrajectoryStepInfo));
    expect(keys(mine.userInput)).toEqual(keys(real.userInput));
    expect(keys(streamed.get(0)?.metadata)).toEqual(keys(real.metadata, ["internalMetadata"]));
  });

  it("PLANNER_RESPONSE text at DONE, poll and stream (planner_response_text.json, stream_planner_text_done.json)", () => {
    const mineIndex = polled.findIndex((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE");
    const real = capture("planner_response_text");
    const mine = polled[mineIndex] as Json;
    expect(keys(mine)).toEqual(keys(real));
    expect(keys(mine.metadata)).toEqual(keys(real.metadata));
    expect(keys(mine.plannerResponse)).toEqual(keys(real.plannerResponse));
    // The August capture's planner read from the prompt cache; the June one (a first turn) did not.
    const realStream = capture("stream_planner_text_done");
    expect(keys(mine.metadata.modelUsage)).toEqual(keys(realStream.metadata.modelUsage));
    expect(keys(mine.metadata.modelUsage)).toEqual(keys(real.metadata.modelUsage).concat("cacheReadTokens").sort());
    const usage = mine.metadata.modelUsage;
    expect(Number(usage.outputTokens)).toBe(Number(usage.thinkingOutputTokens) + Number(usage.responseOutputTokens));
    expect(keys(streamed.get(mineIndex)?.plannerResponse)).toEqual(keys(realStream.plannerResponse));
  });

  it("PLANNER_RESPONSE dispatching a tool: toolCalls in the poll, none in the stream (planner_response_tool_call_run_command.json, stream_planner_tool_call.json)", () => {
    const index = polled.findIndex((s) => s.plannerResponse?.toolCalls?.[0]?.name === "run_command");
    const mine = polled[index] as Json;
    const real = capture("planner_response_tool_call_run_command");
    expect(keys(mine.plannerResponse)).toEqual(keys(real.plannerResponse));
    expect(keys(mine.plannerResponse.toolCalls[0])).toEqual(keys(real.plannerResponse.toolCalls[0]));
    expect(keys(mine.metadata)).toEqual(keys(real.metadata));
    const realStream = capture("stream_planner_tool_call");
    expect(keys(streamed.get(index)?.plannerResponse)).toEqual(keys(realStream.plannerResponse));
    expect(keys(streamed.get(index)?.metadata)).toEqual(keys(realStream.metadata));
  });

  it("RUN_COMMAND WAITING with requestedInteraction.permission (run_command_waiting.json)", () => {
    const real = capture("run_command_waiting");
    expect(keys(runWaiting)).toEqual(keys(real));
    expect(keys(runWaiting.metadata)).toEqual(keys(real.metadata));
    expect(keys(runWaiting.runCommand)).toEqual(keys(real.runCommand));
    expect(keys(runWaiting.requestedInteraction.permission)).toEqual(keys(real.requestedInteraction.permission));
    expect(keys(runWaiting.metadata.toolCall)).toEqual(keys(real.metadata.toolCall));
    expect(keys(JSON.parse(runWaiting.metadata.toolCall.argumentsJson))).toEqual(keys(JSON.parse(real.metadata.toolCall.argumentsJson)));
  });

  it("RUN_COMMAND DONE after a gate, poll projection (run_command_done.json)", () => {
    const real = capture("run_command_done");
    const mine = find(polled, "RUN_COMMAND", (s) => s.completedInteractions !== undefined);
    expect(keys(mine)).toEqual(keys(real));
    expect(keys(mine.metadata)).toEqual(keys(real.metadata));
    // shellName is written by newer builds (August stream captures), not by the June poll capture.
    expect(keys(mine.runCommand, ["shellName"])).toEqual(keys(real.runCommand));
    expect(keys(mine.completedInteractions[0])).toEqual(keys(real.completedInteractions[0]));
    expect(keys(mine.completedInteractions[0].response)).toEqual(keys(real.completedInteractions[0].response));
    expect(keys(mine.permissions.permissionGrants[0])).toEqual(keys(real.permissions.permissionGrants[0]));
  });

  it("RUN_COMMAND DONE without a gate, stream projection (stream_run_command_done.json)", () => {
    const real = capture("stream_run_command_done");
    const index = polled.findIndex((s) => s.runCommand?.commandLine === "node --version");
    const mine = streamed.get(index) as Json;
    expect(mine.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(keys(mine)).toEqual(keys(real));
    expect(keys(mine.metadata)).toEqual(keys(real.metadata));
    expect(keys(mine.runCommand)).toEqual(keys(real.runCommand));
  });

  it("ASK_QUESTION WAITING: options with ids, requestedInteraction.askQuestion (ask_question_waiting.json)", () => {
    const real = capture("ask_question_waiting");
    expect(keys(askWaiting)).toEqual(keys(real));
    expect(keys(askWaiting.metadata)).toEqual(keys(real.metadata));
    expect(keys(askWaiting.askQuestion.questions[0])).toEqual(keys(real.askQuestion.questions[0]));
    expect(keys(askWaiting.askQuestion.questions[0].options[0])).toEqual(keys(real.askQuestion.questions[0].options[0]));
    expect(keys(askWaiting.requestedInteraction)).toEqual(keys(real.requestedInteraction));
    const args = JSON.parse(askWaiting.metadata.toolCall.argumentsJson);
    const realArgs = JSON.parse(real.metadata.toolCall.argumentsJson);
    expect(keys(args)).toEqual(keys(realArgs));
    expect(keys(args.questions[0])).toEqual(keys(realArgs.questions[0]));
    expect(askWaiting.metadata.internalMetadata.statusTransitions.map((t: Json) => t.updatedStatus)).toEqual(
      real.metadata.internalMetadata.statusTransitions.map((t: Json) => t.updatedStatus),
    );
  });

  it("ASK_QUESTION DONE: selectedOptionIds and the echoed responses (ask_question_done.json)", () => {
    const real = capture("ask_question_done");
    const mine = find(polled, "ASK_QUESTION");
    expect(keys(mine)).toEqual(keys(real));
    expect(keys(mine.askQuestion.questions[0])).toEqual(keys(real.askQuestion.questions[0]));
    expect(keys(mine.completedInteractions[0].response)).toEqual(keys(real.completedInteractions[0].response));
    expect(keys(mine.completedInteractions[0].response.askQuestion.responses[0])).toEqual(
      keys(real.completedInteractions[0].response.askQuestion.responses[0]),
    );
    expect(mine.metadata.internalMetadata.statusTransitions.map((t: Json) => t.updatedStatus)).toEqual(
      real.metadata.internalMetadata.statusTransitions.map((t: Json) => t.updatedStatus),
    );
  });

  it("GENERIC in the stream keeps toolCall without argumentsJson (stream_generic_done.json)", () => {
    const real = capture("stream_generic_done");
    const index = polled.findIndex((s) => s.type === "CORTEX_STEP_TYPE_GENERIC");
    const mine = streamed.get(index) as Json;
    expect(keys(mine)).toEqual(keys(real));
    expect(keys(mine.metadata)).toEqual(keys(real.metadata));
    expect(keys(mine.metadata.toolCall)).toEqual(keys(real.metadata.toolCall));
    expect(keys(mine.generic)).toEqual(keys(real.generic));
    expect(keys(mine.generic.result.stepRenderInfo)).toEqual(keys(real.generic.result.stepRenderInfo));
  });

  it("LIST_DIRECTORY (poll) and VIEW_FILE (stream) bodies (list_directory_done.json, stream_view_file_done.json)", () => {
    const realList = capture("list_directory_done");
    const list = find(polled, "LIST_DIRECTORY");
    expect(keys(list)).toEqual(keys(realList));
    expect(keys(list.metadata)).toEqual(keys(realList.metadata));
    expect(keys(list.listDirectory)).toEqual(keys(realList.listDirectory));
    const realView = capture("stream_view_file_done");
    const view = streamed.get(polled.findIndex((s) => s.type === "CORTEX_STEP_TYPE_VIEW_FILE")) as Json;
    expect(keys(view)).toEqual(keys(realView));
    expect(keys(view.metadata)).toEqual(keys(realView.metadata));
    expect(keys(view.viewFile)).toEqual(keys(realView.viewFile));
  });

  it("CHECKPOINT and CONVERSATION_HISTORY (checkpoint.json, conversation_history.json)", () => {
    const realCheckpoint = capture("checkpoint");
    const checkpoint = find(polled, "CHECKPOINT");
    expect(keys(checkpoint)).toEqual(keys(realCheckpoint));
    expect(keys(checkpoint.checkpoint)).toEqual(keys(realCheckpoint.checkpoint));
    // retryInfos appears only when the summariser retried.
    expect(keys(checkpoint.metadata)).toEqual(keys(realCheckpoint.metadata, ["retryInfos"]));
    // The summariser neither thinks nor reads the cache.
    expect(keys(checkpoint.metadata.modelUsage)).toEqual(keys(realCheckpoint.metadata.modelUsage));
    const realHistory = capture("conversation_history");
    const history = find(polled, "CONVERSATION_HISTORY");
    expect(keys(history)).toEqual(keys(realHistory));
    expect(keys(history.metadata)).toEqual(keys(realHistory.metadata));
  });
});
