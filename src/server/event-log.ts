/**
 * One conversation's events as the API serves them: a log with strictly
 * increasing sequence numbers (1, 2, …), so an SSE client resumes with
 * `Last-Event-ID` and gets exactly what it missed. Each event is serialised
 * once, as its finished SSE frame, whatever the number of subscribers.
 *
 * The log keeps a bounded window of the newest events (issue 23): a
 * supervisor of a hundred long conversations must not hold every event of
 * each. A client whose position fell out of the window is resynchronised
 * from a fresh read of the conversation (`event-stream.ts`), never silently
 * skipped forward.
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
  /** The event (read from the frame on demand for entries the window holds: only the frame is kept). */
  readonly event: MapperEvent;
  /** `id: <epoch>-<seq>\nevent: …\ndata: …\n\n`, ready to write. */
  frame: string;
}

export type LogListener = (entry: LoggedEvent) => void;

export interface EventLog {
  /** The run's epoch, the first part of every id on the wire. */
  readonly epoch: string;
  readonly lastId: number;
  /** The first sequence number this log issued (`afterId + 1`): where "from the start" begins. */
  readonly startId: number;
  /** The oldest sequence number the window still holds (`lastId + 1` when it holds none). */
  readonly oldestId: number;
  /** How many events the window keeps at most. */
  readonly window: number;
  append(event: MapperEvent): LoggedEvent;
  /** Whether every entry after `afterId` is still held (a client there can resume without a resync). */
  covers(afterId: number): boolean;
  /** Held entries with `id > afterId`, oldest first (those the window dropped are not returned: check {@link covers}). */
  since(afterId: number): LoggedEvent[];
  /** Called for every later append, synchronously; returns the unsubscribe. */
  subscribe(listener: LogListener): () => void;
}

/** The default window: events kept per conversation (`serve --replay-window`). */
export const DEFAULT_REPLAY_WINDOW = 1000;

export function sseFrame(id: string, type: string, json: string): string {
  // JSON.stringify never emits a raw newline, so one data line is always enough.
  // Joined, not concatenated: `+` and template literals build a rope of string
  // pieces, and a log holding thousands of frames would keep every piece.
  return ["id: ", id, "\nevent: ", type, "\ndata: ", json, "\n\n"].join("");
}

/** A held entry: the frame only; the event is parsed back from it when someone asks. */
class HeldEntry implements LoggedEvent {
  constructor(
    readonly id: number,
    readonly frame: string,
  ) {}

  get event(): MapperEvent {
    const start = this.frame.indexOf("\ndata: ") + 7;
    return JSON.parse(this.frame.slice(start, this.frame.length - 2)) as MapperEvent;
  }
}

export interface EventLogOptions {
  epoch: string;
  /** The first sequence number is `afterId + 1`. */
  afterId?: number;
  /** Events kept; default {@link DEFAULT_REPLAY_WINDOW}. */
  window?: number;
}

/**
 * A log whose first sequence number is `afterId + 1`: a conversation attached
 * again keeps counting upward, so an id a client holds never names a
 * different event.
 */
export function createEventLog(options: EventLogOptions): EventLog {
  const { epoch } = options;
  const window = Math.max(1, Math.floor(options.window ?? DEFAULT_REPLAY_WINDOW));
  let entries: (HeldEntry | undefined)[] = [];
  /** Index of the oldest held entry in `entries` (dropped ones are cleared at once and cut off in batches). */
  let head = 0;
  let lastId = options.afterId ?? 0;
  const listeners = new Set<LogListener>();
  const oldest = () => (head < entries.length ? entries[head]!.id : lastId + 1);
  return {
    epoch,
    window,
    startId: (options.afterId ?? 0) + 1,
    get lastId() {
      return lastId;
    },
    get oldestId() {
      return oldest();
    },
    append(event) {
      const id = ++lastId;
      const frame = sseFrame(formatEventId(epoch, id), event.type, JSON.stringify(event));
      entries.push(new HeldEntry(id, frame));
      if (entries.length - head > window) entries[head++] = undefined;
      // Cut the dropped prefix once it is as long as the window: amortised O(1) per append.
      if (head >= window) {
        entries = entries.slice(head);
        head = 0;
      }
      // Listeners get the event object itself: no parse on the live path.
      const live: LoggedEvent = { id, event, frame };
      for (const listener of listeners) listener(live);
      return live;
    },
    covers(afterId) {
      return afterId >= oldest() - 1;
    },
    since(after) {
      // Sequence numbers are consecutive, so the slice is exact and costs only what is returned.
      const first = oldest();
      const from = head + Math.max(0, Math.min(after + 1 - first, entries.length - head));
      return entries.slice(from) as HeldEntry[];
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
