/**
 * How a settled tool step becomes a function call and its output. Both come
 * from the result step itself: agy 1.0.10's stream projection strips
 * `toolCalls` from planners, so the planner cannot be the source.
 */
import type { DiagnosticCode, EventOf } from "./events.js";
import { clipText, failureDetail } from "./failure-detail.js";
import { callIdFor } from "./ids.js";
import { jsonText, setOwn } from "./plain-json.js";
import { asObject, asString, isObject, metadata, typedBody, typeSuffix, type JsonObject } from "./step-access.js";

/** Hears what could not be projected faithfully; the projection goes on with a fallback. */
export type ProjectionReport = (code: DiagnosticCode, message: string) => void;

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
    setOwn(out, key, args[key]);
  }
  return out;
}

function parsedArgumentsJson(text: string | undefined): JsonObject | undefined {
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
    if (key !== undefined) setOwn(out, name, body[key]);
  }
  return out;
}

/** The call's arguments: compact JSON text, or the model's raw text with agy's parse error. */
export interface ToolArguments {
  text: string;
  error?: string;
}

/**
 * The call's arguments, without `toolAction`/`toolSummary`. Arguments the
 * model got wrong (`invalidJsonStr`) pass on as raw text with `error`;
 * arguments that cannot be serialised (too deep for the stack) become agy's
 * own `argumentsJson` text, else `{}`, and `report` hears of it.
 */
export function toolArguments(step: JsonObject, report: ProjectionReport): ToolArguments {
  const call = asObject(metadata(step)?.["toolCall"]);
  const invalid = asString(call?.["invalidJsonStr"]);
  if (invalid !== undefined && invalid !== "") {
    const error = asString(call?.["invalidJsonErr"]) || "the arguments are not valid JSON";
    report("invalid_tool_arguments", `The model's arguments for ${toolName(step)} are not valid JSON (${clipText(error, 200)}); they are passed on as raw text.`);
    return { text: invalid, error };
  }
  const argumentsJson = asString(call?.["argumentsJson"]);
  const fromJson = parsedArgumentsJson(argumentsJson);
  const genericArgs = fromJson === undefined ? asObject(asObject(step["generic"])?.["args"]) : undefined;
  const source = fromJson ?? genericArgs;
  const args = source === undefined ? recoveredArguments(step) : withoutNarration(source);
  const text = jsonText(args);
  if (text !== undefined) return { text };
  const fallback = fromJson !== undefined && argumentsJson !== undefined ? argumentsJson : "{}";
  report(
    "unserializable_value",
    `The arguments of ${toolName(step)} cannot be serialised (nested too deeply or not plain JSON); ${fallback === "{}" ? "{} was" : "agy's argumentsJson text was"} passed on instead.`,
  );
  return { text: fallback };
}

/** The output text, or undefined when the step carries none. */
function rawOutput(step: JsonObject, report: ProjectionReport): string | undefined {
  const suffix = typeSuffix(step);
  if (suffix === "RUN_COMMAND") {
    return asString(asObject(asObject(step["runCommand"])?.["combinedOutput"])?.["full"]);
  }
  const value = suffix === "GENERIC" ? asObject(step["generic"])?.["result"] : typedBody(step);
  if (value === undefined) return undefined;
  const text = jsonText(value);
  if (text !== undefined) return text;
  report("unserializable_value", `The output of ${toolName(step)} cannot be serialised (nested too deeply or not plain JSON); it was left empty.`);
  return "";
}

/**
 * The function_call_output text. A failed step without output gets a marker
 * a reader can understand; a DONE step without output gets `""` (an empty
 * result beats a call left dangling).
 */
export function toolOutput(step: JsonObject, statusSuffix: string, failed: boolean, report: ProjectionReport): string {
  const output = rawOutput(step, report);
  if (output !== undefined) return output;
  if (!failed) return "";
  const name = asString(asObject(metadata(step)?.["toolCall"])?.["name"]);
  const what = name === undefined || name === "" ? "the tool" : name;
  const detail = failureDetail(step, undefined);
  return `[agy-bridge: ${what} did not complete (status ${statusSuffix})${detail === undefined ? "" : `: ${detail}`}]`;
}

/** The `function_call` and `function_call_output` of a settled tool step, sharing the step-derived call id. */
export function toolEvents(
  step: JsonObject,
  statusSuffix: string,
  at: { conversationId: string; trajectoryId: string; stepIndex: number },
  report: ProjectionReport,
): [EventOf<"function_call">, EventOf<"function_call_output">] {
  const meta = metadata(step);
  const name = toolName(step);
  const { conversationId, trajectoryId, stepIndex } = at;
  const callId = callIdFor(trajectoryId, stepIndex);
  const agyId = asString(asObject(meta?.["toolCall"])?.["id"]);
  const description = asString(meta?.["toolAction"]);
  const failed = statusSuffix !== "DONE";
  // Literals, not spreads: this runs per tool step of a snapshot.
  const args = toolArguments(step, report);
  const call: EventOf<"function_call"> = {
    type: "function_call", conversationId, trajectoryId, stepIndex, callId, name, arguments: args.text,
  };
  if (args.error !== undefined) call.argumentsError = args.error;
  if (agyId) call.agyToolCallId = agyId;
  if (description) call.description = description;
  const output: EventOf<"function_call_output"> = {
    type: "function_call_output", conversationId, trajectoryId, stepIndex, callId, name,
    output: toolOutput(step, statusSuffix, failed, report), isError: failed, stepStatus: statusSuffix,
  };
  return [call, output];
}
