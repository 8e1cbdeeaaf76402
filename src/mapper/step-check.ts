/**
 * Cheap structural checks of one raw step, run before anything reads it. The
 * RPC layer passes steps through as loose JSON, so a step with a field of the
 * wrong type reaches the mapper; it is skipped with a diagnostic and the other
 * steps of the page or frame are mapped. Only the fields the mapper reads are
 * checked, with `typeof` tests rather than a schema (this runs once per step of
 * every snapshot). `null` counts as absent, as proto-JSON parsers read it.
 *
 * The check also hands over what it read ({@link StepFields}): steps from
 * `JSON.parse` come in many shapes, so every property read is a slow
 * (megamorphic) lookup, and the rest of the tracker reads the fields from here
 * instead of from the step again.
 */
import { asIndex, isObject, type JsonObject } from "../protocol/json.js";
import type { DiagnosticCode } from "./events.js";
import { bodyKey, statusSuffixOf, typeSuffixOf } from "./step-access.js";

export interface StepProblem {
  code: DiagnosticCode;
  /** What is wrong, to follow "was skipped: ". */
  problem: string;
}

/** The fields of a checked step that the tracker reads, each read once. */
export interface StepFields {
  /** The type suffix, e.g. `RUN_COMMAND`; `""` when absent. */
  suffix: string;
  /** The status suffix, e.g. `DONE`; `""` when absent. */
  status: string;
  metadata: JsonObject | undefined;
  /** `metadata.sourceTrajectoryStepInfo.trajectoryId` when not empty. */
  trajectoryId: string | undefined;
  /** `metadata.sourceTrajectoryStepInfo.stepIndex`, agy's own index, when sent. */
  stepIndex: number | undefined;
  /** `metadata.modelUsage`. */
  modelUsage: JsonObject | undefined;
  /** `metadata.toolCall`. */
  toolCall: JsonObject | undefined;
  /** `metadata.toolAction`. */
  toolAction: string | undefined;
  /** The typed body (`runCommand`, `plannerResponse`, …). */
  body: JsonObject | undefined;
}

/** Fields to fill with {@link checkStep}; one per tracker is enough, as steps are read one at a time. */
export function newStepFields(): StepFields {
  return {
    suffix: "",
    status: "",
    metadata: undefined,
    trajectoryId: undefined,
    stepIndex: undefined,
    modelUsage: undefined,
    toolCall: undefined,
    toolAction: undefined,
    body: undefined,
  };
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

/**
 * The first problem of a step the mapper cannot read safely; when there is
 * none, `out` holds the step's fields (when there is one, `out` is partly filled).
 */
export function checkStep(step: JsonObject, out: StepFields): StepProblem | undefined {
  const type = step["type"];
  if (!isStringOrAbsent(type)) return wrong("type", type, "a string");
  const status = step["status"];
  if (!isStringOrAbsent(status)) return wrong("status", status, "a string");
  const meta = step["metadata"];
  if (!isObjectOrAbsent(meta)) return wrong("metadata", meta, "an object");
  const requested = step["requestedInteraction"];
  if (!isObjectOrAbsent(requested)) return wrong("requestedInteraction", requested, "an object");
  const error = step["error"];
  if (!isObjectOrAbsent(error)) return wrong("error", error, "an object");
  const completed = step["completedInteractions"];
  if (completed != null && !Array.isArray(completed)) return wrong("completedInteractions", completed, "a list");
  if (meta != null) {
    const problem = metadataProblem(meta as JsonObject, out);
    if (problem !== undefined) return problem;
  } else {
    out.metadata = undefined;
    out.trajectoryId = undefined;
    out.stepIndex = undefined;
    out.modelUsage = undefined;
    out.toolCall = undefined;
    out.toolAction = undefined;
  }
  const suffix = typeSuffixOf(type);
  out.suffix = suffix;
  out.status = statusSuffixOf(status);
  const key = bodyKey(suffix);
  const body = step[key];
  out.body = undefined;
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
  out.body = body;
  return undefined;
}

function metadataProblem(meta: JsonObject, out: StepFields): StepProblem | undefined {
  if (!isStringOrAbsent(meta["createdAt"])) return wrong("metadata.createdAt", meta["createdAt"], "a string");
  if (!isStringOrAbsent(meta["executionId"])) return wrong("metadata.executionId", meta["executionId"], "a string");
  const toolAction = meta["toolAction"];
  if (!isStringOrAbsent(toolAction)) return wrong("metadata.toolAction", toolAction, "a string");
  const toolCall = meta["toolCall"];
  if (!isObjectOrAbsent(toolCall)) return wrong("metadata.toolCall", toolCall, "an object");
  const modelUsage = meta["modelUsage"];
  if (!isObjectOrAbsent(modelUsage)) return wrong("metadata.modelUsage", modelUsage, "an object");
  out.metadata = meta;
  out.toolAction = (toolAction ?? undefined) as string | undefined;
  out.toolCall = (toolCall ?? undefined) as JsonObject | undefined;
  out.modelUsage = (modelUsage ?? undefined) as JsonObject | undefined;
  out.trajectoryId = undefined;
  out.stepIndex = undefined;
  const info = meta["sourceTrajectoryStepInfo"];
  if (info == null) return undefined;
  if (!isObject(info)) return wrong("metadata.sourceTrajectoryStepInfo", info, "an object");
  const trajectoryId = info["trajectoryId"];
  if (!isStringOrAbsent(trajectoryId)) return wrong("metadata.sourceTrajectoryStepInfo.trajectoryId", trajectoryId, "a string");
  if (!isStringOrAbsent(info["cascadeId"])) return wrong("metadata.sourceTrajectoryStepInfo.cascadeId", info["cascadeId"], "a string");
  const index = info["stepIndex"];
  const stepIndex = index == null ? undefined : asIndex(index);
  if (index != null && stepIndex === undefined) {
    return { code: "invalid_index", problem: `its stepIndex ${describeValue(index)} is not a whole number from 0 to 2^53-1` };
  }
  out.trajectoryId = trajectoryId === "" || trajectoryId == null ? undefined : (trajectoryId as string);
  out.stepIndex = stepIndex;
  return undefined;
}
