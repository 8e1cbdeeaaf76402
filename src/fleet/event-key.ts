/**
 * The key of a mapper event: a deterministic identity of the transition it
 * reports, built only from the event's own ids (`interactionId`, `callId`,
 * `messageId`, `trajectoryId` + `stepIndex`), so the same transition gets
 * the same key in every process, after any restart and from the stream or a
 * snapshot. Consumers of `agy:events:*` dedupe by it; the relay uses it to
 * skip what it already published when it resumes.
 *
 * Events that carry no step of their own (`status` edges without one,
 * diagnostics) are placed after the latest step the conversation reported:
 * `at` is that step's `<trajectoryId>:<stepIndex>` (see {@link createKeyer}).
 */
import { fnv1a64, type MapperEvent } from "../mapper/index.js";

function stepRef(event: { trajectoryId?: string | undefined; stepIndex?: number | undefined }, at: string): string {
  return event.trajectoryId !== undefined && event.stepIndex !== undefined ? `${event.trajectoryId}:${event.stepIndex}` : at;
}

/**
 * The key of `event`, or undefined for `history_end` (a boundary each reader
 * of a session gets for itself, not a transition of the conversation).
 */
export function eventKey(event: MapperEvent, at = "start"): string | undefined {
  switch (event.type) {
    case "user_message":
      return event.stepIndex === undefined
        ? `user_message:${event.trajectoryId}:text-${fnv1a64(event.text)}`
        : `user_message:${event.trajectoryId}:${event.stepIndex}`;
    case "message_delta":
    case "reasoning_delta":
      return `${event.type}:${event.messageId}:${event.index}`;
    case "message":
      return `message:${event.messageId}`;
    case "function_call":
    case "function_call_output":
      return `${event.type}:${event.callId}`;
    case "interaction_requested":
    case "interaction_resolved":
    case "policy_delivered":
      return `${event.type}:${event.interactionId}`;
    case "status":
      return `status:${event.status}:${event.reason}:${stepRef(event, at)}`;
    case "usage":
    case "model_changed":
      return `${event.type}:${event.trajectoryId}:${event.stepIndex ?? "-"}`;
    case "conversation_rotated":
      return `conversation_rotated:${event.previousConversationId}:${event.conversationId}`;
    case "diagnostic":
      return `diagnostic:${event.code}:${stepRef(event, at)}:${fnv1a64(event.message)}`;
    case "agy_version_changed":
      return `agy_version_changed:${event.pid ?? "-"}:${event.from ?? "-"}:${event.to ?? "-"}`;
    case "history_end":
      return undefined;
    default: {
      // A new event type fails to compile here until it has a key.
      const unkeyed: never = event;
      return unkeyed;
    }
  }
}

/** Keys a conversation's events in order, remembering the latest step for events that have none. */
export interface Keyer {
  key(event: MapperEvent): string | undefined;
}

export function createKeyer(): Keyer {
  let at = "start";
  return {
    key(event) {
      const key = eventKey(event, at);
      if ("stepIndex" in event && event.stepIndex !== undefined && "trajectoryId" in event && event.trajectoryId !== undefined) {
        at = `${event.trajectoryId}:${event.stepIndex}`;
      }
      return key;
    },
  };
}
