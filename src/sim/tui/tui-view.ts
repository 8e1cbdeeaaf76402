/**
 * What the fake TUI shows of a conversation: the transcript and the prompt a
 * WAITING step asks (the TUI's numbered prompt, spike-notes §5.4).
 */
import type { SimConversation } from "../engine/conversation.js";
import type { JsonObject, WireStep } from "../engine/step-factory.js";
import type { TuiPending, TuiQuestion, TuiTranscriptEntry, TuiView } from "./tui-port.js";
import { asObject, asString } from "../../protocol/json.js";
import { STEP_STATUS, STEP_TYPE } from "../../protocol/wire-names.js";

export function buildTuiView(conversation: SimConversation): TuiView {
  const transcript: TuiTranscriptEntry[] = [];
  let pending: TuiPending | undefined;
  conversation.steps.forEach((step, index) => {
    if (step.status === STEP_STATUS.WAITING) {
      pending ??= pendingOf(conversation, step, index);
      return;
    }
    const entry = entryOf(step);
    if (entry !== undefined) transcript.push(entry);
  });
  const view: TuiView = { conversationId: conversation.id, running: conversation.running, transcript };
  if (pending !== undefined) view.pending = pending;
  return view;
}

function entryOf(step: WireStep): TuiTranscriptEntry | undefined {
  const failed = step.status === STEP_STATUS.ERROR;
  switch (step.type) {
    case STEP_TYPE.USER_INPUT:
      return { role: "user", text: String((step.userInput as JsonObject).userResponse ?? "") };
    case STEP_TYPE.PLANNER_RESPONSE: {
      const planner = step.plannerResponse as JsonObject;
      if (failed) return { role: "error", text: asString(asObject(step.error)?.userErrorMessage) ?? "The model returned an error." };
      const text = planner.modifiedResponse ?? planner.response;
      return typeof text === "string" && text !== "" ? { role: "assistant", text } : undefined;
    }
    case STEP_TYPE.RUN_COMMAND: {
      const run = step.runCommand as JsonObject;
      const head = `$ ${String(run.commandLine)}`;
      if (failed) return { role: "tool", text: `${head} (prompt timed out)` };
      if (step.status === STEP_STATUS.CANCELED) return { role: "tool", text: `${head} (canceled)` };
      if (run.exitCode === undefined) {
        return step.status === STEP_STATUS.DONE ? { role: "tool", text: `${head} (declined)` } : { role: "tool", text: `${head} (running)` };
      }
      const output = asString(asObject(run.combinedOutput)?.full) ?? "";
      return { role: "tool", text: output === "" ? head : `${head}\n${output.replace(/\s+$/, "")}` };
    }
    case STEP_TYPE.ASK_QUESTION: {
      const questions = ((step.askQuestion as JsonObject).questions ?? []) as JsonObject[];
      const lines = questions.map((q) => {
        const options = (q.options ?? []) as { id: string; text: string }[];
        const ids = (q.selectedOptionIds ?? []) as string[];
        const chosen = options.filter((o) => ids.includes(o.id)).map((o) => o.text);
        return `? ${String(q.question)} → ${chosen.length > 0 ? chosen.join(", ") : failed ? "(timed out)" : "(skipped)"}`;
      });
      return step.status === STEP_STATUS.DONE || failed ? { role: "tool", text: lines.join("\n") } : undefined;
    }
    case STEP_TYPE.LIST_DIRECTORY:
      return { role: "tool", text: `Listed ${asString(asObject(step.listDirectory)?.directoryPathUri) ?? ""}` };
    case STEP_TYPE.VIEW_FILE: {
      const uri = asString(asObject(step.viewFile)?.absolutePathUri);
      if (uri !== undefined) return { role: "tool", text: `Read ${uri}` };
      const asked = asString(asObject(asObject(step.requestedInteraction)?.filePermission)?.absolutePathUri) ?? "";
      return step.status === STEP_STATUS.DONE ? { role: "tool", text: `Read ${asked} (declined)` } : undefined;
    }
    case STEP_TYPE.ERROR_MESSAGE: {
      const body = asObject(step.errorMessage);
      if (body?.shouldShowUser !== true) return undefined;
      return { role: "error", text: asString(asObject(body.error)?.userErrorMessage) ?? "agy reported an error." };
    }
    case STEP_TYPE.INVOKE_SUBAGENT: {
      const names = ((asObject(step.invokeSubagent)?.subagents ?? []) as JsonObject[]).map((a) => String(a.typeName)).join(", ");
      return { role: "tool", text: `Sub-agent ${names}${step.status === STEP_STATUS.DONE ? " finished" : " working"}` };
    }
    case STEP_TYPE.GENERIC: {
      const name = asString(asObject(step.metadata.toolCall)?.name) ?? "tool";
      return { role: "tool", text: `${name}: ${asString(asObject(asObject(step.generic)?.result)?.result) ?? ""}` };
    }
    default:
      return undefined;
  }
}

function pendingOf(conversation: SimConversation, step: WireStep, stepIndex: number): TuiPending | undefined {
  const request = asObject(step.requestedInteraction);
  if (request === undefined) return undefined;
  const permission = asObject(request.permission);
  if (permission !== undefined) {
    const pending: TuiPending = {
      kind: "permission",
      trajectoryId: conversation.trajectoryId,
      stepIndex,
      target: asString(asObject(permission.resource)?.target) ?? "",
      description: String(permission.actionDescription ?? ""),
    };
    const pattern = asString(permission.suggestedPersistPattern);
    if (pattern !== undefined) pending.suggestedPersistPattern = pattern;
    return pending;
  }
  const file = asObject(request.filePermission);
  if (file !== undefined) {
    const path = (asString(file.absolutePathUri) ?? "").replace(/^file:\/\//, "");
    return { kind: "permission", trajectoryId: conversation.trajectoryId, stepIndex, target: path, description: `Read ${path}` };
  }
  const ask = asObject(request.askQuestion);
  if (ask === undefined) return undefined;
  const multi = multiSelectFlags(step);
  const questions: TuiQuestion[] = ((ask.questions ?? []) as JsonObject[]).map((q, i) => ({
    question: String(q.question),
    options: ((q.options ?? []) as { id: string; text: string }[]).map((o) => ({ id: o.id, text: o.text })),
    multiSelect: multi[i] === true,
  }));
  return { kind: "question", trajectoryId: conversation.trajectoryId, stepIndex, questions };
}

/** `is_multi_select` lives only in the tool call's argumentsJson (agy 1.0.10). */
function multiSelectFlags(step: WireStep): boolean[] {
  try {
    const args = asObject(JSON.parse(asString(asObject(step.metadata.toolCall)?.argumentsJson) ?? "{}")) ?? {};
    return ((args.questions ?? []) as JsonObject[]).map((q) => q.is_multi_select === true);
  } catch {
    return [];
  }
}
