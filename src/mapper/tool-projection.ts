/**
 * How a settled tool step becomes a function call and its output. Both come
 * from the result step itself: agy 1.0.10's stream projection strips
 * `toolCalls` from planners, so the planner cannot be the source.
 */
import type { EventOf } from "./events.js";
import { callIdFor } from "./ids.js";
import {
  asObject,
  asString,
  compactJson,
  isObject,
  metadata,
  typedBody,
  typeSuffix,
  type JsonObject,
} from "./step-access.js";

/** `toolCall.name`, else `list_dir` for LIST_DIRECTORY (agy's own name), else the lower-cased type suffix. */
export function toolName(step: JsonObject): string {
  const name = asString(asObject(metadata(step)?.["toolCall"])?.["name"]);
  if (name !== undefined && name !== "") return name;
  const suffix = typeSuffix(step);
  if (suffix === "LIST_DIRECTORY") return "list_dir";
  return suffix === "" ? "tool" : suffix.toLowerCase();
}

const NOT_ARGUMENTS = new Set(["toolaction", "toolsummary"]);

/** `args` without `toolAction`/`toolSummary` (any case); a fresh object, `args` untouched. */
function withoutNarration(args: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key in args) {
    // Both narration keys are 10 or 11 characters long: skip lower-casing the rest.
    if ((key.length === 10 || key.length === 11) && NOT_ARGUMENTS.has(key.toLowerCase())) continue;
    out[key] = args[key];
  }
  return out;
}

function parsedArgumentsJson(step: JsonObject): JsonObject | undefined {
  const text = asString(asObject(metadata(step)?.["toolCall"])?.["argumentsJson"]);
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Recovers arguments from the typed body through `metadata.argumentsOrder`,
 * case-insensitively: an exact key first, then a key that starts with the
 * argument name (agy 1.0.10 returns `AbsolutePath` as `absolutePathUri`).
 */
function recoveredArguments(step: JsonObject): JsonObject {
  const order = metadata(step)?.["argumentsOrder"];
  const body = typedBody(step);
  const out: JsonObject = {};
  if (!Array.isArray(order) || body === undefined) return out;
  const keys = Object.keys(body);
  const lowered = keys.map((k) => k.toLowerCase());
  for (const name of order) {
    if (typeof name !== "string" || NOT_ARGUMENTS.has(name.toLowerCase())) continue;
    const wanted = name.toLowerCase();
    let at = lowered.indexOf(wanted);
    if (at < 0) at = lowered.findIndex((k) => k.startsWith(wanted));
    const key = at < 0 ? undefined : keys[at];
    if (key !== undefined) out[name] = body[key];
  }
  return out;
}

/** Compact JSON text of the call's arguments, without `toolAction`/`toolSummary`. */
export function toolArguments(step: JsonObject): string {
  const fromJson = parsedArgumentsJson(step);
  if (fromJson !== undefined) return compactJson(withoutNarration(fromJson));
  const genericArgs = asObject(asObject(step["generic"])?.["args"]);
  if (genericArgs !== undefined) return compactJson(withoutNarration(genericArgs));
  return compactJson(recoveredArguments(step));
}

/** The output text, or undefined when the step carries none. */
function rawOutput(step: JsonObject): string | undefined {
  const suffix = typeSuffix(step);
  if (suffix === "RUN_COMMAND") {
    return asString(asObject(asObject(step["runCommand"])?.["combinedOutput"])?.["full"]);
  }
  if (suffix === "GENERIC") {
    const result = asObject(step["generic"])?.["result"];
    return result === undefined ? undefined : compactJson(result, "");
  }
  const body = typedBody(step);
  return body === undefined ? undefined : compactJson(body, "");
}

/**
 * The function_call_output text. A failed step without output gets a marker
 * a reader can understand; a DONE step without output gets `""` (an empty
 * result beats a call left dangling).
 */
export function toolOutput(step: JsonObject, statusSuffix: string, failed: boolean): string {
  const output = rawOutput(step);
  if (output !== undefined) return output;
  if (!failed) return "";
  const name = asString(asObject(metadata(step)?.["toolCall"])?.["name"]);
  const what = name === undefined || name === "" ? "the tool" : name;
  return `[agy-bridge: ${what} did not complete (status ${statusSuffix})]`;
}

/** The `function_call` and `function_call_output` of a settled tool step, sharing the step-derived call id. */
export function toolEvents(
  step: JsonObject,
  statusSuffix: string,
  at: { conversationId: string; trajectoryId: string; stepIndex: number },
): [EventOf<"function_call">, EventOf<"function_call_output">] {
  const meta = metadata(step);
  const name = toolName(step);
  const { conversationId, trajectoryId, stepIndex } = at;
  const callId = callIdFor(trajectoryId, stepIndex);
  const agyId = asString(asObject(meta?.["toolCall"])?.["id"]);
  const description = asString(meta?.["toolAction"]);
  const failed = statusSuffix !== "DONE";
  // Literals, not spreads: this runs per tool step of a snapshot.
  const call: EventOf<"function_call"> = {
    type: "function_call", conversationId, trajectoryId, stepIndex, callId, name, arguments: toolArguments(step),
  };
  if (agyId) call.agyToolCallId = agyId;
  if (description) call.description = description;
  const output: EventOf<"function_call_output"> = {
    type: "function_call_output", conversationId, trajectoryId, stepIndex, callId, name,
    output: toolOutput(step, statusSuffix, failed), isError: failed, stepStatus: statusSuffix,
  };
  return [call, output];
}
