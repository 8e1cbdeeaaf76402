/**
 * How a settled tool step becomes a function call and its output. Both come
 * from the result step itself: agy 1.0.10's stream projection strips
 * `toolCalls` from planners, so the planner cannot be the source.
 */
import { normaliseArguments } from "./argument-forms.js";
import type { DiagnosticCode, EventOf } from "./events.js";
import type { EventSink } from "./event-sink.js";
import { clipText, failureDetail } from "./failure-detail.js";
import { callIdFor } from "./ids.js";
import { recordedVerdict } from "./interaction-verdict.js";
import { jsonText, setOwn } from "./plain-json.js";
import { asObject, asString, isObject, type JsonObject } from "./step-access.js";
import type { StepFields } from "./step-check.js";
import { StringMemo } from "./string-memo.js";

/**
 * Where to report what could not be projected faithfully (the projection goes
 * on with a fallback): the sink and the step. Plain values rather than a
 * callback, so a tool step allocates no closure.
 */
export interface ProjectionReport {
  sink: EventSink;
  trajectoryId: string;
  stepIndex: number;
}

function report(at: ProjectionReport, code: DiagnosticCode, message: string): void {
  at.sink.diagnostic(code, `Step ${at.stepIndex}: ${message}`, { trajectoryId: at.trajectoryId, stepIndex: at.stepIndex });
}

/** `toolCall.name`, else `list_dir` for LIST_DIRECTORY (agy's own name), else the lower-cased type suffix. */
export function toolName(fields: StepFields): string {
  const name = asString(fields.toolCall?.["name"]);
  if (name !== undefined && name !== "") return name;
  const suffix = fields.suffix;
  if (suffix === "LIST_DIRECTORY") return "list_dir";
  return suffix === "" ? "tool" : suffix.toLowerCase();
}

const NOT_ARGUMENTS = new Set(["toolaction", "toolsummary"]);

/**
 * A narration key: `toolAction`/`toolSummary` in any case. Only keys of their
 * length (10 or 11) that start with a `t` pay for lower-casing.
 */
function isNarration(key: string): boolean {
  if ((key.length !== 10 && key.length !== 11) || (key.charCodeAt(0) | 0x20) !== 0x74) return false;
  return key === "toolAction" || key === "toolSummary" || NOT_ARGUMENTS.has(key.toLowerCase());
}

function hasNarration(args: JsonObject): boolean {
  for (const key in args) {
    if (isNarration(key)) return true;
  }
  return false;
}

/** `args` without `toolAction`/`toolSummary` (any case); a fresh object, `args` untouched. */
function withoutNarration(args: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key in args) {
    if (!isNarration(key)) setOwn(out, key, args[key]);
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
 * Undefined when no argument was found there.
 */
function recoveredArguments(fields: StepFields): JsonObject | undefined {
  const order = fields.metadata?.["argumentsOrder"];
  const body = fields.body;
  if (!Array.isArray(order) || body === undefined) return undefined;
  let out: JsonObject | undefined;
  const keys = Object.keys(body);
  for (const name of order) {
    if (typeof name !== "string") continue;
    const wanted = lowerCase(name);
    if (NOT_ARGUMENTS.has(wanted)) continue;
    const key = keyFor(keys, wanted);
    if (key === undefined) continue;
    out ??= {};
    setOwn(out, name, body[key]);
  }
  return out;
}

/** The first key equal to `wanted` ignoring case, else the first that starts with it. */
function keyFor(keys: readonly string[], wanted: string): string | undefined {
  for (const key of keys) {
    if (lowerCase(key) === wanted) return key;
  }
  for (const key of keys) {
    if (lowerCase(key).startsWith(wanted)) return key;
  }
  return undefined;
}

// Argument and body field names repeat from step to step; bounded.
const lowered = new StringMemo((text) => text.toLowerCase(), 1024);

/** `text.toLowerCase()`, memoised. */
function lowerCase(text: string): string {
  return lowered.of(text);
}

/**
 * The step's arguments are only in a projection it was not read from: no
 * `argumentsJson` (agy's stream projection drops `toolCall`), no
 * `generic.args`, and nothing of `argumentsOrder` in the typed body (a
 * sub-agent's prompt, a declined file read's path). The poll projection of the
 * same step has them.
 */
export function argumentsOnlyInFullStep(step: JsonObject, fields: StepFields): boolean {
  const call = fields.toolCall;
  if (asString(call?.["argumentsJson"]) !== undefined || asString(call?.["invalidJsonStr"])) return false;
  if (asObject(asObject(step["generic"])?.["args"]) !== undefined) return false;
  const order = fields.metadata?.["argumentsOrder"];
  if (!Array.isArray(order) || !order.some((name) => typeof name === "string" && !NOT_ARGUMENTS.has(lowerCase(name)))) return false;
  return recoveredArguments(fields) === undefined;
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
export function toolArguments(step: JsonObject, fields: StepFields, at: ProjectionReport): ToolArguments {
  const call = fields.toolCall;
  const invalid = asString(call?.["invalidJsonStr"]);
  if (invalid !== undefined && invalid !== "") {
    const error = asString(call?.["invalidJsonErr"]) || "the arguments are not valid JSON";
    report(
      at,
      "invalid_tool_arguments",
      `The model's arguments for ${toolName(fields)} are not valid JSON (${clipText(error, 200)}); they are passed on as raw text.`,
    );
    return { text: invalid, error };
  }
  const argumentsJson = asString(call?.["argumentsJson"]);
  // One source both projections carry, so a live call and its replay agree: `generic.args`,
  // else what the typed body gives back through argumentsOrder; only then the poll-only argumentsJson.
  const genericArgs = asObject(asObject(step["generic"])?.["args"]);
  let fromJson: JsonObject | undefined;
  let args: JsonObject;
  if (genericArgs !== undefined) {
    args = withoutNarration(genericArgs);
  } else {
    const recovered = recoveredArguments(fields);
    if (recovered !== undefined) {
      args = recovered;
    } else {
      fromJson = parsedArgumentsJson(argumentsJson);
      // Our own parse is plain JSON nobody else holds: it may be normalised in place.
      args = fromJson === undefined ? {} : hasNarration(fromJson) ? withoutNarration(fromJson) : fromJson;
    }
  }
  normaliseArguments(args);
  const text = jsonText(args);
  if (text !== undefined) return { text };
  const fallback = fromJson !== undefined && argumentsJson !== undefined ? argumentsJson : "{}";
  report(
    at,
    "unserializable_value",
    `The arguments of ${toolName(fields)} cannot be serialised (nested too deeply or not plain JSON); ${fallback === "{}" ? "{} was" : "agy's argumentsJson text was"} passed on instead.`,
  );
  return { text: fallback };
}

/** The output text, or undefined when the step carries none. */
function rawOutput(fields: StepFields, at: ProjectionReport): string | undefined {
  const { suffix, body } = fields;
  if (suffix === "RUN_COMMAND") {
    return asString(asObject(body?.["combinedOutput"])?.["full"]);
  }
  const value = suffix === "GENERIC" ? body?.["result"] : body;
  if (value === undefined) return undefined;
  const text = jsonText(value);
  if (text !== undefined) return text;
  report(at, "unserializable_value", `The output of ${toolName(fields)} cannot be serialised (nested too deeply or not plain JSON); it was left empty.`);
  return "";
}

/**
 * The function_call_output text. A failed step without output gets a marker
 * a reader can understand; a DONE step without output gets `""` (an empty
 * result beats a call left dangling).
 */
export function toolOutput(step: JsonObject, fields: StepFields, failed: boolean, at: ProjectionReport): string {
  const output = rawOutput(fields, at);
  if (output !== undefined) return output;
  if (!failed) return "";
  // The call's own name (toolCall.name, else the type's), so both projections give the same marker.
  const name = toolName(fields);
  const what = name === "tool" && fields.suffix === "" ? "the tool" : name;
  const detail = failureDetail(step, undefined);
  return `[agy-bridge: ${what} did not complete (status ${fields.status})${detail === undefined ? "" : `: ${detail}`}]`;
}

/**
 * The output of a declined call: what the step carries, else a marker with
 * the instruction the user gave the model, when the echo has one.
 */
function declinedOutput(step: JsonObject, fields: StepFields, name: string, at: ProjectionReport): string {
  const output = rawOutput(fields, at);
  if (output !== undefined && output !== "") return output;
  const instruction = denyInstruction(step);
  return `[agy-bridge: the user declined ${name}; it did not run${instruction === undefined ? "" : `. Instruction: ${clipText(instruction, 500)}`}]`;
}

/** `userDenyInstruction` of the echoed answer, when present and not blank. */
function denyInstruction(step: JsonObject): string | undefined {
  const completed = step["completedInteractions"];
  if (!Array.isArray(completed) || completed.length === 0) return undefined;
  const response = asObject(asObject(completed[completed.length - 1])?.["response"]);
  const text = asString(asObject(response?.["permission"])?.["userDenyInstruction"]);
  return text === undefined || text.trim() === "" ? undefined : text;
}

/**
 * Pushes the `function_call` and `function_call_output` of a settled tool
 * step, sharing the step-derived call id, after any diagnostic about them.
 */
export function pushToolEvents(sink: EventSink, step: JsonObject, fields: StepFields, trajectoryId: string, stepIndex: number): void {
  const at: ProjectionReport = { sink, trajectoryId, stepIndex };
  const status = fields.status;
  const conversationId = sink.conversationId;
  const name = toolName(fields);
  const callId = callIdFor(trajectoryId, stepIndex);
  const description = fields.toolAction;
  // A declined call did not run, whatever status agy gave the step (agy 1.0.10 leaves it DONE).
  const declined = recordedVerdict(step) === "denied";
  const failed = status !== "DONE" || declined;
  // Literals, not spreads: this runs per tool step of a snapshot.
  const args = toolArguments(step, fields, at);
  const call: EventOf<"function_call"> = {
    type: "function_call",
    conversationId,
    trajectoryId,
    stepIndex,
    callId,
    name,
    arguments: args.text,
  };
  if (args.error !== undefined) call.argumentsError = args.error;
  if (description) call.description = description;
  const output = declined ? declinedOutput(step, fields, name, at) : toolOutput(step, fields, failed, at);
  sink.push(call);
  const result: EventOf<"function_call_output"> = {
    type: "function_call_output",
    conversationId,
    trajectoryId,
    stepIndex,
    callId,
    name,
    output,
    isError: failed,
    stepStatus: status,
  };
  if (declined) result.declined = true;
  sink.push(result);
}
