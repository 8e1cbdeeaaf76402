/**
 * The steps that park a turn on the user: a gated RUN_COMMAND, an
 * ASK_QUESTION, a VIEW_FILE behind a file permission, and file edits and
 * creations behind one, with agy's timeout-and-retry of unanswered prompts.
 */
import { approvesCommand, approvesFileRead, echoedResponse } from "./answer-echo.js";
import { TurnStopped, type SimInteraction } from "./conversation.js";
import type { CommandScriptStep, CreateFileScriptStep, EditFileScriptStep, QuestionScriptStep, ViewFileScriptStep } from "./scenario-schema.js";
import { moveStep, stepInfo, type JsonObject, type ToolCallSpec, type WireStep } from "./step-factory.js";
import { createFileCall, editFileCall, fileUri, viewFileBody, viewFileCall } from "./tool-bodies.js";
import type { TurnScope } from "./turn-scope.js";
import { asIndex, asObject } from "../../protocol/json.js";
import { STEP_STATUS, STEP_TYPE, STEP_TYPE_PREFIX } from "../../protocol/wire-names.js";

const S = STEP_STATUS;

/** How a gate parks. */
export interface GateOptions {
  /**
   * Park without a stream frame: the move to WAITING is seen by snapshots
   * and `waitingSteps` only, as agy did with the second gate of a chained
   * command (spike-notes §5.2).
   */
  silent?: boolean;
}

/**
 * Parks the turn on a WAITING step until answered. The move to WAITING is
 * streamed once (unless `silent`); nothing more is streamed while it is
 * parked, because nothing changes. An unanswered prompt times out to ERROR
 * and agy retries it as a new WAITING step at a higher index (agy 1.0.10,
 * spike-notes §5.3); the answer lands on whichever is current.
 */
export async function awaitGate(
  scope: TurnScope,
  firstIndex: number,
  request: JsonObject,
  gate: GateOptions = {},
): Promise<{ index: number; interaction: SimInteraction }> {
  const conv = scope.conv;
  let index = firstIndex;
  for (;;) {
    const step = conv.steps[index] as WireStep;
    step.requestedInteraction = structuredClone(request);
    moveStep(step, S.WAITING, scope.settings.stamp());
    if (gate.silent === true) conv.touchedQuietly(index);
    else conv.touched(index);
    const result = await new Promise<SimInteraction | "timeout">((resolve, reject) => {
      const timer = scope.settings.clock.setTimeout(() => {
        conv.releaseGate(index);
        off();
        resolve("timeout");
      }, scope.settings.interactionTimeoutMs);
      const off = scope.token.onStop((how) => {
        if (how !== "force") return;
        scope.settings.clock.clearTimeout(timer);
        conv.releaseGate(index);
        reject(new TurnStopped());
      });
      conv.registerGate(index, (interaction) => {
        scope.settings.clock.clearTimeout(timer);
        off();
        resolve(interaction);
      });
    });
    if (result !== "timeout") return { index, interaction: result };
    moveStep(step, S.ERROR, scope.settings.stamp());
    conv.touched(index);
    const retry = structuredClone(step);
    const place = scope.place(asIndex(asObject(step.metadata.sourceTrajectoryStepInfo)?.metadataIndex) ?? 0);
    delete retry.requestedInteraction;
    Object.assign(retry.metadata, {
      createdAt: place.stamp,
      viewableAt: place.stamp,
      startedAt: place.stamp,
      sourceTrajectoryStepInfo: stepInfo(place),
      internalMetadata: { statusTransitions: [{ updatedStatus: S.PENDING, timestamp: place.stamp }] },
    });
    retry.status = S.PENDING;
    index = conv.append(retry);
  }
}

/** `completedInteractions`: the request, and the answer as sent (whatever its kind), re-serialised as proto-JSON. */
function echo(scope: TurnScope, index: number, request: JsonObject, interaction: SimInteraction): JsonObject[] {
  return [{ request: structuredClone(request), response: echoedResponse(scope.conv.trajectoryId, index, interaction) }];
}

export async function playCommand(scope: TurnScope, script: CommandScriptStep): Promise<boolean> {
  const conv = scope.conv;
  const cwd = script.cwd ?? "/home/sim/project";
  const spec: ToolCallSpec = {
    name: "run_command",
    args: { CommandLine: script.commandLine, Cwd: cwd, WaitMsBeforeAsync: 2000 },
    toolAction: script.toolAction ?? `Running ${script.commandLine}`,
    toolSummary: script.toolSummary ?? `Run ${script.commandLine}`,
  };
  let index = await scope.toolStep(spec, STEP_TYPE.RUN_COMMAND, {
    runCommand: { commandLine: script.commandLine, proposedCommandLine: script.commandLine, cwd, waitMsBeforeAsync: "2000", blocking: true },
  });
  const resource = { action: "command", target: script.commandLine };
  let permissions: JsonObject | undefined;
  let completed: JsonObject[] | undefined;
  if (script.gate !== false) {
    const request = {
      permission: {
        resource,
        persistSuggestionType: "PERSIST_SUGGESTION_TYPE_SUGGESTED",
        suggestedPersistPattern: script.commandLine,
        actionDescription: spec.toolAction,
      },
    };
    const answered = await awaitGate(scope, index, request, { silent: script.silentGate === true });
    index = answered.index;
    const allow = approvesCommand(answered.interaction);
    // proto-JSON omits `allow: false`.
    permissions = { permissionGrants: [allow ? { resource, allow: true } : { resource }] };
    completed = echo(scope, index, request, answered.interaction);
    if (!allow) {
      finishStep(scope, index, { permissions, completedInteractions: completed });
      await scope.planner({ text: script.deniedText ?? "The command was declined, so I did not run it." });
      return false;
    }
  }
  const step = conv.steps[index] as WireStep;
  moveStep(step, S.RUNNING, scope.settings.stamp());
  conv.touched(index);
  await scope.sleep(script.runMs ?? 30);
  const run = step.runCommand as JsonObject;
  run.exitCode = script.exitCode ?? 0;
  if (script.output !== undefined && script.output !== "") run.combinedOutput = { full: script.output };
  run.shellName = "bash";
  finishStep(scope, index, { ...(permissions !== undefined ? { permissions } : {}), ...(completed !== undefined ? { completedInteractions: completed } : {}) });
  return true;
}

/** Marks a step DONE, placing `extra` the way agy orders keys (permissions before the body, echoes last). */
function finishStep(scope: TurnScope, index: number, extra: JsonObject): void {
  const step = scope.conv.steps[index] as WireStep;
  step.metadata.completedAt = scope.settings.stamp();
  moveStep(step, S.DONE, scope.settings.stamp());
  const { type, status, metadata, requestedInteraction, ...body } = step;
  const { completedInteractions, ...front } = extra;
  const rebuilt: WireStep = { type, status, metadata, ...front, ...body };
  if (requestedInteraction !== undefined) rebuilt.requestedInteraction = requestedInteraction;
  if (completedInteractions !== undefined) rebuilt.completedInteractions = completedInteractions;
  scope.conv.steps[index] = rebuilt;
  scope.conv.touched(index);
}

export async function playQuestion(scope: TurnScope, script: QuestionScriptStep): Promise<void> {
  const conv = scope.conv;
  const spec: ToolCallSpec = {
    name: "ask_question",
    args: {
      questions: script.questions.map((q) => ({ is_multi_select: q.multiSelect === true, options: q.options, question: q.question })),
    },
    toolAction: script.toolAction ?? "Asking the user a question",
    toolSummary: script.toolSummary ?? "Question for the user",
  };
  const questions = script.questions.map((q) => ({
    question: q.question,
    options: q.options.map((text, i) => ({ id: String(i + 1), text })),
  }));
  let index = await scope.toolStep(spec, STEP_TYPE.ASK_QUESTION, { askQuestion: { questions: structuredClone(questions) } });
  moveStep(conv.steps[index] as WireStep, S.RUNNING, scope.settings.stamp());
  const request = { askQuestion: { questions } };
  const answered = await awaitGate(scope, index, request);
  index = answered.index;
  const payload = asObject(answered.interaction.askQuestion) ?? {};
  const responses = Array.isArray(payload.responses) ? (payload.responses as JsonObject[]) : [];
  const chosen: string[] = [];
  const step = conv.steps[index] as WireStep;
  const stored = (step.askQuestion as { questions: JsonObject[] }).questions;
  questions.forEach((q, i) => {
    const response = responses.find((r) => r.question === q.question) ?? responses[i];
    const ids = Array.isArray(response?.selectedOptionIds) ? (response.selectedOptionIds as unknown[]).map(String) : [];
    if (ids.length > 0 && stored[i] !== undefined) stored[i].selectedOptionIds = ids;
    for (const id of ids) {
      const option = q.options.find((o) => o.id === id);
      if (option !== undefined) chosen.push(option.text);
    }
    if (typeof response?.writeInResponse === "string" && response.writeInResponse !== "") chosen.push(response.writeInResponse);
  });
  moveStep(step, S.RUNNING, scope.settings.stamp());
  finishStep(scope, index, { completedInteractions: echo(scope, index, request, answered.interaction) });
  const text =
    chosen.length > 0
      ? scope.fill(script.answeredText ?? "You chose: {{answer}}.", chosen.join(", "))
      : scope.fill(script.skippedText ?? "Understood, I will not ask again and will carry on without an answer.");
  await scope.planner({ text });
}

/**
 * A VIEW_FILE behind a file-permission gate: `requestedInteraction.filePermission`,
 * answered over RPC with `interaction.filePermission { allow, scope }` (agy's
 * schema, spike-notes §11; the CLI captures show no such gate). Returns false
 * when the read was denied (the turn then ends).
 */
export async function playGatedFileRead(scope: TurnScope, script: ViewFileScriptStep): Promise<boolean> {
  const conv = scope.conv;
  let index = await scope.toolStep(viewFileCall(script), STEP_TYPE.VIEW_FILE, {});
  const request = { filePermission: { absolutePathUri: fileUri(script.path) } };
  const answered = await awaitGate(scope, index, request);
  index = answered.index;
  const completedInteractions = echo(scope, index, request, answered.interaction);
  if (!approvesFileRead(answered.interaction)) {
    finishStep(scope, index, { completedInteractions });
    await scope.planner({ text: script.deniedText ?? `I was not allowed to read ${script.path}, so I stopped.` });
    return false;
  }
  const step = conv.steps[index] as WireStep;
  moveStep(step, S.RUNNING, scope.settings.stamp());
  conv.touched(index);
  await scope.sleep(10);
  Object.assign(step, viewFileBody(script));
  finishStep(scope, index, { completedInteractions });
  return true;
}

/**
 * The step type of an edit: CODE_ACTION, the type agy 1.0.10's CLI showed
 * for file edits (spike-notes §4.1); the type of a new file: WRITE_TO_FILE,
 * from agy's schema (spike-notes §11). Neither body was captured, so the
 * simulator writes none: the tool call's arguments carry the path and the
 * lines, and `requestedInteraction.filePermission` the path.
 */
export const CODE_ACTION_TYPE = `${STEP_TYPE_PREFIX}CODE_ACTION`;
export const WRITE_TO_FILE_TYPE = `${STEP_TYPE_PREFIX}WRITE_TO_FILE`;

/**
 * An edit of an existing file (CODE_ACTION) or a new file (WRITE_TO_FILE)
 * behind a file-permission gate, asked and answered as the file read's is:
 * `requestedInteraction.filePermission { absolutePathUri }`, answered with
 * `interaction.filePermission { allow, scope }` (spike-notes §11). Approved,
 * the step moves RUNNING then DONE (the write "happens"); denied, it goes
 * DONE from WAITING without running, the planner says `deniedText` and the
 * turn ends (returns false).
 */
export async function playFileWrite(scope: TurnScope, script: EditFileScriptStep | CreateFileScriptStep): Promise<boolean> {
  const conv = scope.conv;
  const edit = script.kind === "editFile";
  let index = await scope.toolStep(edit ? editFileCall(script) : createFileCall(script), edit ? CODE_ACTION_TYPE : WRITE_TO_FILE_TYPE, {});
  const request = { filePermission: { absolutePathUri: fileUri(script.path) } };
  const answered = await awaitGate(scope, index, request);
  index = answered.index;
  const completedInteractions = echo(scope, index, request, answered.interaction);
  if (!approvesFileRead(answered.interaction)) {
    finishStep(scope, index, { completedInteractions });
    const declined = edit
      ? `The edit of ${script.path} was rejected, so I left the file as it was.`
      : `Creating ${script.path} was denied, so I did not write it.`;
    await scope.planner({ text: script.deniedText ?? declined });
    return false;
  }
  const step = conv.steps[index] as WireStep;
  moveStep(step, S.RUNNING, scope.settings.stamp());
  conv.touched(index);
  await scope.sleep(10);
  finishStep(scope, index, { completedInteractions });
  return true;
}
