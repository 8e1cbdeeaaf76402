/**
 * The committed events of a settled step that is neither a USER_INPUT nor a
 * planner: a tool call and its output, an ERROR_MESSAGE, nothing for system
 * steps, and one diagnostic for a step with nothing to show, so no step
 * vanishes unnoticed (docs/events.md, `function_call`, `message`).
 */
import type { EventSink } from "./event-sink.js";
import { clipText, errorMessageStep } from "./failure-detail.js";
import { messageIdFor } from "./ids.js";
import type { JsonObject } from "./step-access.js";
import type { StepFields } from "./step-check.js";
import { pushToolEvents } from "./tool-projection.js";

/** System steps that carry nothing for a reader (documented in docs/events.md). */
const SILENT_TYPES = new Set(["CONVERSATION_HISTORY", "CHECKPOINT", "SYSTEM_MESSAGE"]);
/** Types that are tools even in a projection that lost the tool markers. */
const TOOL_TYPES = new Set([
  "RUN_COMMAND",
  "LIST_DIRECTORY",
  "ASK_QUESTION",
  "VIEW_FILE",
  "CODE_ACTION",
  "GENERIC",
  "INVOKE_SUBAGENT",
  "MCP_TOOL",
  "COMMAND_STATUS",
]);

/** The events of the first settled version of a step (not USER_INPUT, not PLANNER_RESPONSE); `fields` are its checked fields. */
export function settledStepEvents(sink: EventSink, raw: JsonObject, fields: StepFields, trajectoryId: string, stepIndex: number): void {
  const suffix = fields.suffix;
  if (suffix === "ERROR_MESSAGE") errorMessage(sink, raw, fields.body, trajectoryId, stepIndex);
  else if (!SILENT_TYPES.has(suffix)) settledOther(sink, raw, fields, trajectoryId, stepIndex);
}

/** ERROR_MESSAGE: a failure message when agy shows it to the user, else a diagnostic. */
function errorMessage(sink: EventSink, raw: JsonObject, body: JsonObject | undefined, trajectoryId: string, stepIndex: number): void {
  const { detail, showUser } = errorMessageStep(raw, body);
  if (!showUser) {
    sink.diagnostic("agy_error", `agy recorded an error not meant for the user: ${clipText(detail ?? "no detail given")}`, { trajectoryId, stepIndex });
    return;
  }
  sink.push({
    type: "message",
    conversationId: sink.conversationId,
    trajectoryId,
    stepIndex,
    messageId: messageIdFor(trajectoryId, stepIndex),
    role: "assistant",
    text: `[agy-bridge: agy reported an error${detail === undefined ? "" : `: ${detail}`}]`,
    failed: true,
  });
}

/**
 * Any other settled step becomes a tool call and its output when it has
 * something to show (tool markers, a known tool type, `metadata.toolCall`, or
 * a typed body); otherwise one diagnostic.
 */
function settledOther(sink: EventSink, raw: JsonObject, fields: StepFields, trajectoryId: string, stepIndex: number): void {
  const suffix = fields.suffix;
  // Tool markers: a `toolAction` string, or a `toolCall` (with an id or not); unseen tool types still map.
  if (TOOL_TYPES.has(suffix) || fields.toolAction !== undefined || fields.toolCall !== undefined || fields.body !== undefined) {
    pushToolEvents(sink, raw, fields, trajectoryId, stepIndex);
    return;
  }
  const name = suffix === "" ? "(missing)" : clipText(suffix, 80);
  sink.diagnostic("unknown_step_type", `Step ${stepIndex} of type ${name} carries no tool call and no body; it maps to no event.`, { trajectoryId, stepIndex });
}
