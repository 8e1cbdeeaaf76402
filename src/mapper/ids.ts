/**
 * Id derivations shared by every projection of a step, so the poll and stream
 * shapes of one step always give the same ids.
 */
import { FNV_OFFSET_BASIS, fnvHex, fnvUpdate, type FnvState } from "./hash.js";

/** Committed message and its deltas: `agy_msg_<trajectoryId>_<stepIndex>`. */
export function messageIdFor(trajectoryId: string, stepIndex: number): string {
  return `agy_msg_${trajectoryId}_${stepIndex}`;
}

/** Tool call and its output: `agy_call_<trajectoryId>_<stepIndex>` (never agy's own `toolCall.id`). */
export function callIdFor(trajectoryId: string, stepIndex: number): string {
  return `agy_call_${trajectoryId}_${stepIndex}`;
}

/**
 * The hash state of the last `conversationId \n trajectoryId \n` prefix: a
 * snapshot asks for many ids of one trajectory, and FNV continues from a prefix.
 */
let prefix: { conversationId: string; trajectoryId: string; state: FnvState } = {
  conversationId: "",
  trajectoryId: "",
  state: fnvUpdate(FNV_OFFSET_BASIS, "\n\n"),
};

/**
 * `int_` + FNV-1a 64 of `conversationId \n trajectoryId \n stepIndex`. A timeout
 * retry lives at a higher step index, so it is a new interaction.
 */
export function interactionIdFor(conversationId: string, trajectoryId: string, stepIndex: number): string {
  if (conversationId !== prefix.conversationId || trajectoryId !== prefix.trajectoryId) {
    prefix = { conversationId, trajectoryId, state: fnvUpdate(FNV_OFFSET_BASIS, `${conversationId}\n${trajectoryId}\n`) };
  }
  return `int_${fnvHex(fnvUpdate(prefix.state, String(stepIndex)))}`;
}
