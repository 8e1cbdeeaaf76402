/**
 * The two projections agy serves of one step (agy 1.0.10 captures):
 * `GetCascadeTrajectorySteps` (poll) returns everything; the
 * `StreamAgentStateUpdates` frames drop `metadata.toolCall` (kept on GENERIC
 * steps, minus `argumentsJson`), `plannerResponse.toolCalls` and
 * `metadata.internalMetadata`, and a DONE planner there carries only
 * `modifiedResponse`, not `response`.
 */
import { STEP_TYPE, type JsonObject, type WireStep } from "./step-factory.js";

/** A deep copy of the stored step (the poll projection). */
export function pollProjection(step: WireStep): WireStep {
  return structuredClone(step);
}

/** The low-fidelity copy sent in stream frames. */
export function streamProjection(step: WireStep): WireStep {
  const copy = structuredClone(step);
  const metadata = copy.metadata;
  delete metadata.internalMetadata;
  const toolCall = metadata.toolCall as JsonObject | undefined;
  if (toolCall !== undefined) {
    if (copy.type === STEP_TYPE.GENERIC) delete toolCall.argumentsJson;
    else delete metadata.toolCall;
  }
  const planner = copy.plannerResponse as JsonObject | undefined;
  if (planner !== undefined) {
    delete planner.toolCalls;
    delete planner.response;
    delete planner.thinkingSignature;
  }
  return copy;
}
