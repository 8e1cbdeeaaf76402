/**
 * What the fake TUI shows of a conversation: the transcript and the prompt a
 * WAITING step asks (the TUI's numbered prompt, spike-notes §5.4).
 */
import type { SimConversation } from "../engine/conversation.js";
import { STEP_TYPE, type JsonObject, type WireStep } from "../engine/step-factory.js";
import type { TuiPending, TuiQuestion, TuiTranscriptEntry, TuiView } from "./tui-port.js";
import { STEP_STATUS } from "../../protocol/wire-names.js";

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
      if (failed) return { role: "error", text: String(planner.errorMessage ?? "The model returned an error.") };
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
      const output = ((run.combinedOutput as JsonObject | undefined)?.full as string | undefined) ?? "";
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
      return { role: "tool", text: `Listed ${String((step.listDirectory as JsonObject | undefined)?.directoryPathUri ?? "")}` };
    case STEP_TYPE.VIEW_FILE:
      return { role: "tool", text: `Read ${String((step.viewFile as JsonObject | undefined)?.absolutePathUri ?? "")}` };
    case STEP_TYPE.GENERIC: {
      const toolCall = step.metadata.toolCall as JsonObject | undefined;
      return { role: "tool", text: `${String(toolCall?.name ?? "tool")}: ${String(((step.generic as JsonObject | undefined)?.result as JsonObject | undefined)?.result ?? "")}` };
    }
    default:
      return undefined;
  }
}

function pendingOf(conversation: SimConversation, step: WireStep, stepIndex: number): TuiPending | undefined {
  const request = step.requestedInteraction as JsonObject | undefined;
  if (request === undefined) return undefined;
  const permission = request.permission as JsonObject | undefined;
  if (permission !== undefined) {
    const pending: TuiPending = {
      kind: "permission",
      trajectoryId: conversation.trajectoryId,
      stepIndex,
      target: String((permission.resource as JsonObject | undefined)?.target ?? ""),
      description: String(permission.actionDescription ?? ""),
    };
    if (typeof permission.suggestedPersistPattern === "string") pending.suggestedPersistPattern = permission.suggestedPersistPattern;
    return pending;
  }
  const ask = request.askQuestion as JsonObject | undefined;
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
    const args = JSON.parse(String((step.metadata.toolCall as JsonObject | undefined)?.argumentsJson ?? "{}")) as JsonObject;
    return ((args.questions ?? []) as JsonObject[]).map((q) => q.is_multi_select === true);
  } catch {
    return [];
  }
}
