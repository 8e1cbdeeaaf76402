/**
 * One conversation's events as the API serves them: an append-only log with
 * strictly increasing ids (1, 2, …), so an SSE client resumes with
 * `Last-Event-ID` and gets exactly what it missed. Each event is serialised
 * once, as its finished SSE frame, whatever the number of subscribers.
 */
import type { MapperEvent } from "../mapper/index.js";

export interface LoggedEvent {
  id: number;
  event: MapperEvent;
  /** `id: …\nevent: …\ndata: …\n\n`, ready to write. */
  frame: string;
}

export type LogListener = (entry: LoggedEvent) => void;

export interface EventLog {
  readonly lastId: number;
  append(event: MapperEvent): LoggedEvent;
  /** Entries with `id > afterId`, oldest first. */
  since(afterId: number): LoggedEvent[];
  /** Called for every later append, synchronously; returns the unsubscribe. */
  subscribe(listener: LogListener): () => void;
}

export function sseFrame(id: number, type: string, json: string): string {
  // JSON.stringify never emits a raw newline, so one data line is always enough.
  return `id: ${id}\nevent: ${type}\ndata: ${json}\n\n`;
}

/**
 * A log whose first id is `afterId + 1`: a conversation attached again keeps
 * counting upward, so an id a client holds never names a different event.
 */
export function createEventLog(afterId = 0): EventLog {
  const entries: LoggedEvent[] = [];
  const listeners = new Set<LogListener>();
  return {
    get lastId() {
      return afterId + entries.length;
    },
    append(event) {
      const id = afterId + entries.length + 1;
      const entry = { id, event, frame: sseFrame(id, event.type, JSON.stringify(event)) };
      entries.push(entry);
      for (const listener of listeners) listener(entry);
      return entry;
    },
    since(after) {
      // Ids are consecutive, so the slice is exact and costs only what is returned.
      return entries.slice(Math.max(0, Math.min(after - afterId, entries.length)));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
