/**
 * When a step read from agy's stream projection lacks what its events need,
 * so a reader that can should read the step in full (a
 * `GetCascadeTrajectorySteps` page at its index) before giving it to the
 * tracker. The stream projection drops `metadata.toolCall` (agy 1.0.10,
 * spike-notes §3.4), which holds a question's multi-select flags (§4.3) and
 * the arguments of tools whose typed body does not repeat them.
 */
import { lacksMultiSelect } from "./interaction-spec.js";
import type { JsonObject } from "./step-access.js";
import type { StepFields } from "./step-check.js";
import { argumentsOnlyInFullStep } from "./tool-projection.js";

const SETTLED = new Set(["DONE", "ERROR", "CANCELED", "INTERRUPTED", "CLEARED"]);
/** Steps that are not tool calls (their events need nothing from `toolCall`). */
const NOT_TOOLS = new Set(["USER_INPUT", "PLANNER_RESPONSE", "ERROR_MESSAGE", "CONVERSATION_HISTORY", "CHECKPOINT", "SYSTEM_MESSAGE"]);

/**
 * Whether the events still to come from this version of a step need fields it
 * lacks. `requested`: its interaction was already requested (its request
 * needs nothing more).
 */
export function fullStepWanted(step: JsonObject, fields: StepFields, requested: boolean): boolean {
  const { status, suffix } = fields;
  const settled = SETTLED.has(status);
  if (!requested && (status === "WAITING" || settled) && lacksMultiSelect(step)) return true;
  return settled && !NOT_TOOLS.has(suffix) && argumentsOnlyInFullStep(step, fields);
}
