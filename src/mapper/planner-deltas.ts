/**
 * The live text of a planner step: `message_delta` and `reasoning_delta`
 * while it is GENERATING, and the deltas that close its blocks when it
 * commits (rules in docs/events.md, `message_delta`).
 */
import type { EventSink } from "./event-sink.js";
import { messageIdFor } from "./ids.js";
import { advanceLiveText, finishLiveText, hasPrefix, newLiveText } from "./live-text.js";
import type { LiveStep } from "./live-step.js";
import { asString, plannerText, type JsonObject } from "./step-access.js";

function rewriteDiagnostic(sink: EventSink, what: string, trajectoryId: string, stepIndex: number): void {
  sink.diagnostic("non_prefix_rewrite", `agy rewrote the ${what} of step ${stepIndex} instead of extending it; the whole text was sent again with replace.`, {
    trajectoryId,
    stepIndex,
  });
}

/** The deltas of one GENERATING version of a planner: reasoning first, then text. */
export function generatingDeltas(sink: EventSink, body: JsonObject | undefined, state: LiveStep, trajectoryId: string, stepIndex: number): void {
  const messageId = messageIdFor(trajectoryId, stepIndex);
  const conversationId = sink.conversationId;
  const thinking = asString(body?.["thinking"]);
  if (thinking !== undefined && thinking !== "") {
    const started = state.reasoning === undefined;
    state.reasoning ??= newLiveText();
    const change = advanceLiveText(state.reasoning, thinking);
    if (change !== undefined) {
      if (change.replace) rewriteDiagnostic(sink, "reasoning", trajectoryId, stepIndex);
      const { text, replace, index } = change;
      sink.push({ type: "reasoning_delta", conversationId, trajectoryId, stepIndex, messageId, index, text, replace, started });
    }
  }
  state.text ??= newLiveText();
  const change = advanceLiveText(state.text, plannerText(body));
  if (change !== undefined) {
    if (change.replace) rewriteDiagnostic(sink, "text", trajectoryId, stepIndex);
    const { text, replace, index } = change;
    sink.push({ type: "message_delta", conversationId, trajectoryId, stepIndex, messageId, index, text, replace, final: false });
  }
}

/**
 * The deltas of a planner that settled with `text`: the rest of its reasoning
 * when that extends what was sent, and the final text delta when the consumer
 * has a live block to close or the step brings committed text.
 */
export function commitDeltas(
  sink: EventSink,
  body: JsonObject | undefined,
  text: string,
  state: LiveStep | undefined,
  status: string,
  trajectoryId: string,
  stepIndex: number,
  messageId: string,
): void {
  if (state === undefined) return;
  const conversationId = sink.conversationId;
  const thinking = asString(body?.["thinking"]);
  if (state.reasoning !== undefined && thinking !== undefined && hasPrefix(thinking, state.reasoning.sent)) {
    const change = advanceLiveText(state.reasoning, thinking);
    if (change !== undefined) {
      const { text: rest, replace, index } = change;
      sink.push({ type: "reasoning_delta", conversationId, trajectoryId, stepIndex, messageId, index, text: rest, replace, started: false });
    }
  }
  // A final delta only closes a live block the consumer has, or brings committed text: never an empty one from nothing.
  if (state.text !== undefined && (state.text.next > 0 || (status === "DONE" && text !== ""))) {
    const change = finishLiveText(state.text, text);
    if (change.replace && status === "DONE") rewriteDiagnostic(sink, "text", trajectoryId, stepIndex);
    const { text: rest, replace, index } = change;
    sink.push({ type: "message_delta", conversationId, trajectoryId, stepIndex, messageId, index, text: rest, replace, final: true });
  }
}
