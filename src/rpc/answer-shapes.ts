/**
 * The loose checks of agy's unary answers, as plain guards: each accepts
 * exactly what its zod schema in `protocol/wire-schemas.ts` accepts (a test
 * holds the two together on generated bodies) and hands the body through
 * untouched, unknown fields and all. Plain code rather than zod because
 * importing zod cost every RPC call's process more than the call
 * (docs/scale.md, "Start-up"); the schemas stay for library users.
 */
import { RpcError } from "../errors.js";
import type { AllTrajectoriesResponse, ConversationMetadataResponse, JsonObject, ModelCatalog, TrajectoryResponse } from "../protocol/wire-schemas.js";
import { isWireStep } from "./response-decoding.js";

/** Where a body first broke its shape, and what was expected there. */
interface Problem {
  at: string;
  expected: string;
}

/** Returns the first problem of `value` at path `at`, or undefined. */
type Check = (value: unknown, at: string) => Problem | undefined;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const path = (at: string, key: string | number) => (at === "" ? String(key) : `${at}.${key}`);

const optional =
  (check: Check): Check =>
  (value, at) =>
    value === undefined ? undefined : check(value, at);

const text: Check = (value, at) => (typeof value === "string" ? undefined : { at, expected: "a string" });

/** int32 fields as numbers or digit strings (agy 1.0.10 emits both). */
const wireInt: Check = (value, at) =>
  (typeof value === "number" && Number.isSafeInteger(value)) || (typeof value === "string" && /^-?\d+$/.test(value))
    ? undefined
    : { at, expected: "an integer" };

const step: Check = (value, at) =>
  isWireStep(value) ? undefined : { at, expected: "a step (an object whose type, status and metadata have their wire types)" };

function object(fields: Readonly<Record<string, Check>>): Check {
  const entries = Object.entries(fields);
  return (value, at) => {
    if (!isObject(value)) return { at, expected: "an object" };
    for (const [key, check] of entries) {
      const problem = check(value[key], path(at, key));
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

function list(item: Check): Check {
  return (value, at) => {
    if (!Array.isArray(value)) return { at, expected: "a list" };
    for (let i = 0; i < value.length; i++) {
      const problem = item(value[i], path(at, i));
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

function record(item: Check): Check {
  return (value, at) => {
    if (!isObject(value)) return { at, expected: "an object" };
    for (const key of Object.keys(value)) {
      const problem = item(value[key], path(at, key));
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

const conversationMetadata = object({ metadata: optional(object({ rootConversationId: optional(text) })) });

const trajectory = object({
  trajectory: optional(object({ trajectoryId: optional(text), cascadeId: optional(text), steps: optional(list(step)) })),
  status: optional(text),
  numTotalSteps: optional(wireInt),
});

const trajectorySummary = object({
  trajectoryId: optional(text),
  status: optional(text),
  stepCount: optional(wireInt),
  lastModifiedTime: optional(text),
  lastUserInputTime: optional(text),
  trajectoryType: optional(text),
  waitingSteps: optional(list(object({ step: optional(step), stepIndex: optional(wireInt) }))),
});

const allTrajectories = object({ trajectorySummaries: optional(record(trajectorySummary)) });

const modelCatalog = object({ models: optional(record(object({ model: optional(text) }))) });

const jsonObject = object({});

function checked<T>(value: unknown, check: Check, method: string): T {
  const problem = check(value, "");
  if (problem === undefined) return value as T;
  throw new RpcError("protocol", `${method} answered with an unexpected shape at ${problem.at || "(root)"}: expected ${problem.expected}`, { method });
}

/** `GetConversationMetadata`: `metadata.rootConversationId`, when present, is a string. */
export const checkConversationMetadata = (value: unknown, method: string) => checked<ConversationMetadataResponse>(value, conversationMetadata, method);

/** `GetCascadeTrajectory`: the trajectory's ids and steps, the status and the step count have their wire types. */
export const checkTrajectory = (value: unknown, method: string) => checked<TrajectoryResponse>(value, trajectory, method);

/** `GetAllCascadeTrajectories`: each summary's fields, waiting steps included, have their wire types. */
export const checkAllTrajectories = (value: unknown, method: string) => checked<AllTrajectoriesResponse>(value, allTrajectories, method);

/** The unwrapped catalog of `GetAvailableModels`: `models` maps names to objects whose `model` is a string. */
export const checkModelCatalog = (value: unknown, method: string) => checked<ModelCatalog>(value, modelCatalog, method);

/** Any JSON object: the answer of calls whose body agy leaves empty (`{}`). */
export const checkJsonObject = (value: unknown, method: string) => checked<JsonObject>(value, jsonObject, method);
