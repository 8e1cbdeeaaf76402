/**
 * Requests that need the full step. agy's stream projection lacks fields a
 * request needs — a question's multi-select flags live only in the poll
 * projection's `toolCall.argumentsJson` (agy 1.0.10, spike-notes §4.3) — so
 * the reader's tracker holds such a request (`holdIncompleteRequests`) and the
 * reader reads the step with a `GetCascadeTrajectorySteps` page from its
 * frontier (`stepOffset`, which includes every step still WAITING). The page
 * goes through the tracker like any other, which then emits the request with
 * the full step's content, in order with everything else.
 */
import { createTrajectoryTracker, type TrajectoryTracker } from "../mapper/index.js";

/** The tracker a conversation reader uses: it holds requests the stream cannot complete. */
export function createReaderTracker(conversationId: string): TrajectoryTracker {
  return createTrajectoryTracker({ conversationId, holdIncompleteRequests: true });
}

/**
 * After a stream frame: when the tracker holds a request for its full step,
 * read from the frontier (coalesced with a read in flight). A failed read is
 * tried again after the next frame, and by the reader's own probes and polls.
 */
export function readHeldSteps(tracker: TrajectoryTracker, reconcile: () => Promise<void>): void {
  if (tracker.stepsToRead().length === 0) return;
  void reconcile().catch(() => undefined);
}
