/**
 * One conversation's events as the MCP tools read them: numbered from 1 in
 * arrival order (the cursor of `read_events` is a number), with the pending
 * interactions and the last status read off the same stream, so `read_events`,
 * `wait_for` and the resources always agree. A log outlives a re-attach: the
 * numbers keep counting and an interaction already pending is not logged twice.
 */
import { currentWaitingFor, type EventOf, type MapperEvent, type WaitingFor } from "../mapper/index.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";

export type InteractionRequested = EventOf<"interaction_requested">;

export interface LoggedEvent {
  id: number;
  event: MapperEvent;
}

export type LogStatus = "running" | "waiting" | "idle" | "failed" | "unknown";

export interface ConversationLog {
  /** The id of the newest event; 0 before any. */
  readonly lastId: number;
  /** True once the history read at attach is in (a `history_end` arrived). */
  readonly historyRead: boolean;
  append(event: MapperEvent): void;
  /** Events with ids above `id`, at most `limit`. */
  after(id: number, limit: number): LoggedEvent[];
  status(): LogStatus;
  /** With status `waiting`: what the conversation waits for (docs/events.md, `status`); undefined otherwise. */
  waitingFor(): WaitingFor | undefined;
  pending(): InteractionRequested[];
  /** The request of an interaction seen in this conversation, open or among the last 1,000 resolved. */
  request(interactionId: string): InteractionRequested | undefined;
  /** Called after each appended event and when the history is in; returns the unsubscribe. */
  subscribe(listener: (entry: LoggedEvent | undefined) => void): () => void;
}

export function createConversationLog(): ConversationLog {
  const events: LoggedEvent[] = [];
  // Open and recent requests are the ledger's fold of this log (docs/architecture.md): one request per
  // interaction, a policy-decided one never pending, the oldest resolved ones forgotten past its bound.
  const ledger = createInteractionLedger();
  const listeners = new Set<(entry: LoggedEvent | undefined) => void>();
  let status: LogStatus = "unknown";
  let waitedFor: WaitingFor | undefined;
  let historyRead = false;
  const tell = (entry: LoggedEvent | undefined) => {
    for (const listener of [...listeners]) listener(entry);
  };
  return {
    get lastId() {
      return events.at(-1)?.id ?? 0;
    },
    get historyRead() {
      return historyRead;
    },
    append(event) {
      if (event.type === "history_end") {
        historyRead = true;
        // A turn in the history shows as a status edge; none means no turn runs.
        if (status === "unknown") status = "idle";
        tell(undefined);
        return;
      }
      if (event.type === "interaction_requested") {
        // A re-attach replays what is open: it is already here.
        if (ledger.apply(event) === undefined) return;
      } else if (event.type === "interaction_resolved") {
        ledger.apply(event);
      } else if (event.type === "status") {
        status = event.status;
        waitedFor = event.status === "waiting" ? event.waitingFor : undefined;
      }
      const entry = { id: (events.at(-1)?.id ?? 0) + 1, event };
      events.push(entry);
      tell(entry);
    },
    after(id, limit) {
      // Ids are dense from the first one: the position is arithmetic.
      const first = events[0]?.id ?? 1;
      const start = Math.max(0, id + 1 - first);
      return events.slice(start, start + limit);
    },
    status: () => status,
    waitingFor: () => currentWaitingFor(status, ledger.open(), waitedFor),
    pending: () => ledger.open(),
    request: (interactionId) => ledger.get(interactionId)?.request,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
