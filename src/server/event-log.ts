/**
 * One conversation's events as the API serves them: an append-only log with
 * strictly increasing sequence numbers (1, 2, …), so an SSE client resumes
 * with `Last-Event-ID` and gets exactly what it missed. Each event is
 * serialised once, as its finished SSE frame, whatever the number of
 * subscribers.
 *
 * The id on the wire is `<epoch>-<seq>` (see `event-id.ts`): the epoch names
 * the run of `serve`, so an id from an earlier run is never mistaken for one
 * of this run's.
 */
import type { MapperEvent } from "../mapper/index.js";
import { formatEventId } from "./event-id.js";

export interface LoggedEvent {
  /** The sequence number within this run. */
  id: number;
  event: MapperEvent;
  /** `id: <epoch>-<seq>\nevent: …\ndata: …\n\n`, ready to write. */
  frame: string;
}

export type LogListener = (entry: LoggedEvent) => void;

export interface EventLog {
  /** The run's epoch, the first part of every id on the wire. */
  readonly epoch: string;
  readonly lastId: number;
  append(event: MapperEvent): LoggedEvent;
  /** Entries with `id > afterId`, oldest first. */
  since(afterId: number): LoggedEvent[];
  /** Called for every later append, synchronously; returns the unsubscribe. */
  subscribe(listener: LogListener): () => void;
}

export function sseFrame(id: string, type: string, json: string): string {
  // JSON.stringify never emits a raw newline, so one data line is always enough.
  return `id: ${id}\nevent: ${type}\ndata: ${json}\n\n`;
}

/**
 * A log whose first sequence number is `afterId + 1`: a conversation attached
 * again keeps counting upward, so an id a client holds never names a
 * different event.
 */
export function createEventLog(options: { epoch: string; afterId?: number }): EventLog {
  const { epoch } = options;
  const afterId = options.afterId ?? 0;
  const entries: LoggedEvent[] = [];
  const listeners = new Set<LogListener>();
  return {
    epoch,
    get lastId() {
      return afterId + entries.length;
    },
    append(event) {
      const id = afterId + entries.length + 1;
      const entry = { id, event, frame: sseFrame(formatEventId(epoch, id), event.type, JSON.stringify(event)) };
      entries.push(entry);
      for (const listener of listeners) listener(entry);
      return entry;
    },
    since(after) {
      // Sequence numbers are consecutive, so the slice is exact and costs only what is returned.
      return entries.slice(Math.max(0, Math.min(after - afterId, entries.length)));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
