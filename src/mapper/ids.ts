/**
 * Id derivations shared by every projection of a step, so the poll and stream
 * shapes of one step always give the same ids.
 */
import { fnv1a64 } from "./hash.js";

/** Committed message and its deltas: `agy_msg_<trajectoryId>_<stepIndex>`. */
export function messageIdFor(trajectoryId: string, stepIndex: number): string {
  return `agy_msg_${trajectoryId}_${stepIndex}`;
}

/** Tool call and its output: `agy_call_<trajectoryId>_<stepIndex>` (never agy's own `toolCall.id`). */
export function callIdFor(trajectoryId: string, stepIndex: number): string {
  return `agy_call_${trajectoryId}_${stepIndex}`;
}

/**
 * `int_` + FNV-1a 64 of `conversationId \n trajectoryId \n stepIndex`. A timeout
 * retry lives at a higher step index, so it is a new interaction.
 */
export function interactionIdFor(conversationId: string, trajectoryId: string, stepIndex: number): string {
  return `int_${fnv1a64(`${conversationId}\n${trajectoryId}\n${stepIndex}`)}`;
}
