/**
 * The two projections agy serves of one step (agy 1.0.10 captures):
 * `GetCascadeTrajectorySteps` (poll) returns everything; the
 * `StreamAgentStateUpdates` frames drop `metadata.toolCall` (kept on GENERIC
 * steps, minus `argumentsJson`), `plannerResponse.toolCalls` and
 * `metadata.internalMetadata`, and a DONE planner there carries only
 * `modifiedResponse`, not `response`.
 */
import type { WireStep } from "./step-factory.js";
import { asObject } from "../../protocol/json.js";
import { STEP_TYPE } from "../../protocol/wire-names.js";

/** A deep copy of the stored step (the poll projection). */
export function pollProjection(step: WireStep): WireStep {
  return structuredClone(step);
}

/** The low-fidelity copy sent in stream frames. */
export function streamProjection(step: WireStep): WireStep {
  const copy = structuredClone(step);
  const metadata = copy.metadata;
  delete metadata.internalMetadata;
  const toolCall = asObject(metadata.toolCall);
  if (toolCall !== undefined) {
    if (copy.type === STEP_TYPE.GENERIC) delete toolCall.argumentsJson;
    else delete metadata.toolCall;
  }
  const planner = asObject(copy.plannerResponse);
  if (planner !== undefined) {
    delete planner.toolCalls;
    delete planner.response;
    delete planner.thinkingSignature;
  }
  return copy;
}
