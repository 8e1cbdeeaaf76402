/**
 * Cheap structural checks of one raw step, run before anything reads it. The
 * RPC layer passes steps through as loose JSON, so a step with a field of the
 * wrong type reaches the mapper; it is skipped with a diagnostic and the other
 * steps of the page or frame are mapped. Only the fields the mapper reads are
 * checked, with `typeof` tests rather than a schema (this runs once per step of
 * every snapshot). `null` counts as absent, as proto-JSON parsers read it.
 */
import { asIndex, isObject, type JsonObject } from "../protocol/json.js";
import type { DiagnosticCode } from "./events.js";
import { bodyKey, typeSuffix } from "./step-access.js";

export interface StepProblem {
  code: DiagnosticCode;
  /** What is wrong, to follow "was skipped: ". */
  problem: string;
}

/** A short description of a value for a diagnostic (never the whole value: it may be huge). */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return value.length > 40 ? `a ${value.length}-character string` : JSON.stringify(value);
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function wrong(where: string, value: unknown, expected: string): StepProblem {
  return { code: "invalid_step", problem: `its ${where} is ${describeValue(value)}, not ${expected}` };
}

/** `value` is absent (undefined or null) or of the type; written out flat, as this runs per step. */
const isStringOrAbsent = (value: unknown) => value == null || typeof value === "string";
const isObjectOrAbsent = (value: unknown) => value == null || isObject(value);

const PLANNER_STRINGS = ["response", "modifiedResponse", "thinking", "stopReason"] as const;

/** The first problem of a step the mapper cannot read safely, or undefined when it is fine. */
export function stepProblem(step: JsonObject): StepProblem | undefined {
  if (!isStringOrAbsent(step["type"])) return wrong("type", step["type"], "a string");
  if (!isStringOrAbsent(step["status"])) return wrong("status", step["status"], "a string");
  const meta = step["metadata"];
  if (!isObjectOrAbsent(meta)) return wrong("metadata", meta, "an object");
  if (!isObjectOrAbsent(step["requestedInteraction"])) return wrong("requestedInteraction", step["requestedInteraction"], "an object");
  if (!isObjectOrAbsent(step["error"])) return wrong("error", step["error"], "an object");
  const completed = step["completedInteractions"];
  if (completed != null && !Array.isArray(completed)) return wrong("completedInteractions", completed, "a list");
  if (meta != null) {
    const problem = metadataProblem(meta as JsonObject);
    if (problem !== undefined) return problem;
  }
  const suffix = typeSuffix(step);
  const key = bodyKey(suffix);
  const body = step[key];
  if (body == null) return undefined;
  if (!isObject(body)) return wrong(key, body, "an object");
  if (suffix === "PLANNER_RESPONSE") {
    const toolCalls = body["toolCalls"];
    if (toolCalls != null && !Array.isArray(toolCalls)) return wrong(`${key}.toolCalls`, toolCalls, "a list");
    for (const field of PLANNER_STRINGS) {
      if (!isStringOrAbsent(body[field])) return wrong(`${key}.${field}`, body[field], "a string");
    }
  } else if (suffix === "USER_INPUT" && !isStringOrAbsent(body["userResponse"])) {
    return wrong(`${key}.userResponse`, body["userResponse"], "a string");
  }
  return undefined;
}

function metadataProblem(meta: JsonObject): StepProblem | undefined {
  if (!isStringOrAbsent(meta["createdAt"])) return wrong("metadata.createdAt", meta["createdAt"], "a string");
  if (!isStringOrAbsent(meta["executionId"])) return wrong("metadata.executionId", meta["executionId"], "a string");
  if (!isStringOrAbsent(meta["toolAction"])) return wrong("metadata.toolAction", meta["toolAction"], "a string");
  if (!isObjectOrAbsent(meta["toolCall"])) return wrong("metadata.toolCall", meta["toolCall"], "an object");
  if (!isObjectOrAbsent(meta["modelUsage"])) return wrong("metadata.modelUsage", meta["modelUsage"], "an object");
  const info = meta["sourceTrajectoryStepInfo"];
  if (info == null) return undefined;
  if (!isObject(info)) return wrong("metadata.sourceTrajectoryStepInfo", info, "an object");
  if (!isStringOrAbsent(info["trajectoryId"])) return wrong("metadata.sourceTrajectoryStepInfo.trajectoryId", info["trajectoryId"], "a string");
  if (!isStringOrAbsent(info["cascadeId"])) return wrong("metadata.sourceTrajectoryStepInfo.cascadeId", info["cascadeId"], "a string");
  const index = info["stepIndex"];
  if (index != null && asIndex(index) === undefined) {
    return { code: "invalid_index", problem: `its stepIndex ${describeValue(index)} is not a whole number from 0 to 2^53-1` };
  }
  return undefined;
}
