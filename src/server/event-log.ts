/**
 * One conversation's events as the API serves them: a log with strictly
 * increasing sequence numbers (1, 2, …), so an SSE client resumes with
 * `Last-Event-ID` and gets exactly what it missed. Each event is serialised
 * once, as its finished SSE frame, whatever the number of subscribers.
 *
 * The log keeps a bounded window of the newest events (issue 23): a
 * supervisor of a hundred long conversations must not hold every event of
 * each, and what it holds is kept deflated in blocks (`frame-store.ts`). A client whose position fell out of the window is resynchronised
 * from a fresh read of the conversation (`event-stream.ts`), never silently
 * skipped forward.
 *
 * The id on the wire is `<epoch>-<seq>` (see `event-id.ts`): the epoch names
 * the run of `serve`, so an id from an earlier run is never mistaken for one
 * of this run's. A **sourced** log (a session whose source ids its events:
 * `serve --redis`, where each event is an entry of a Redis stream) writes the
 * source's id instead, so the same event has the same id in every run of
 * `serve`; the sequence numbers stay, as the log's own positions.
 */
import type { MapperEvent } from "../mapper/index.js";
import { compareStreamIds, formatEventId, isStreamId } from "./event-id.js";
import { FrameStore } from "./frame-store.js";

export interface LoggedEvent {
  /** The sequence number within this run. */
  id: number;
  /** The event (read from the frame on demand for entries the window holds: only the frame is kept). */
  readonly event: MapperEvent;
  /** `id: <epoch>-<seq>\nevent: …\ndata: …\n\n` (a sourced log: `id: <source id>\n…`), ready to write. */
  frame: string;
  /** The id on the wire (read from the frame). */
  readonly wireId: string;
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
  /** Whether the wire ids are the source's (stream entry ids, strictly increasing) rather than `<epoch>-<seq>`. */
  readonly sourced: boolean;
  /** Appends `event`; a sourced log needs its `sourceId`, greater than the last one. */
  append(event: MapperEvent, sourceId?: string): LoggedEvent;
  /** The wire id of the entry with sequence number `seq`, when known (held, or the newest); always known in a log that is not sourced. */
  wireIdOf(seq: number): string | undefined;
  /**
   * Sourced logs: where a client that last saw `sourceId` stands — after the
   * held entry of sequence number N (the newest whose id is not greater);
   * `ahead` when the log has not read past it yet (or holds nothing); `behind`
   * when it is older than the oldest held entry, so entries after it may be
   * missing (dropped by the window, or trimmed from the source before it was
   * read).
   */
  locate(sourceId: string): number | "ahead" | "behind";
  /** Whether every entry after `afterId` is still held (a client there can resume without a resync). */
  covers(afterId: number): boolean;
  /** Held entries with `id > afterId`, oldest first (those the window dropped are not returned: check {@link covers}). */
  since(afterId: number): LoggedEvent[];
  /**
   * Where the conversation's history ends in a sourced log: the sequence
   * number of its last entry (`startId - 1` for an empty history), recorded
   * by {@link endHistory}; undefined until then. A sourced log has no entry
   * for `history_end` (the source has none: each reader gets the boundary
   * itself), so each SSE client is sent an id-less one at this position
   * (`event-stream.ts`). A log that is not sourced holds `history_end` as an
   * entry and leaves this undefined.
   */
  readonly historyEnd: number | undefined;
  /**
   * A log that is not sourced: the sequence number of its `history_end`
   * entry, once appended. A client resynchronised after it gets an id-less
   * `history_end` after the snapshot (the snapshot is a fresh read and holds
   * none), or a page would wait for the history again.
   */
  readonly historyEntry: number | undefined;
  /** Records that the history ends after the newest entry, and tells the subscribers' `onHistoryEnd`; later calls change nothing. */
  endHistory(): void;
  /** Called for every later append, synchronously (and `onHistoryEnd` when {@link endHistory} records the end); returns the unsubscribe. */
  subscribe(listener: LogListener, onHistoryEnd?: () => void): () => void;
}

/** The default window: events kept per conversation (`serve --replay-window`). */
export const DEFAULT_REPLAY_WINDOW = 1000;

export function sseFrame(id: string, type: string, json: string): string {
  // JSON.stringify never emits a raw newline, so one data line is always enough.
  // Joined, not concatenated: `+` and template literals build a rope of string
  // pieces, and a log holding thousands of frames would keep every piece.
  return ["id: ", id, "\nevent: ", type, "\ndata: ", json, "\n\n"].join("");
}

function frameId(frame: string): string {
  return frame.slice(4, frame.indexOf("\n"));
}

/** A held entry: the frame only; the event (and the id) are parsed back from it when someone asks. */
class HeldEntry implements LoggedEvent {
  constructor(
    readonly id: number,
    readonly frame: string,
  ) {}

  get event(): MapperEvent {
    const start = this.frame.indexOf("\ndata: ") + 7;
    return JSON.parse(this.frame.slice(start, this.frame.length - 2)) as MapperEvent;
  }

  get wireId(): string {
    return frameId(this.frame);
  }
}

export interface EventLogOptions {
  epoch: string;
  /** The first sequence number is `afterId + 1`. */
  afterId?: number;
  /** Events kept; default {@link DEFAULT_REPLAY_WINDOW}. */
  window?: number;
  /** Wire ids are the ids each append brings (stream entry ids), not `<epoch>-<seq>`. */
  sourced?: boolean;
}

/**
 * A log whose first sequence number is `afterId + 1`: a conversation attached
 * again keeps counting upward, so an id a client holds never names a
 * different event.
 */
export function createEventLog(options: EventLogOptions): EventLog {
  const { epoch } = options;
  const sourced = options.sourced === true;
  /** A sourced log's newest source id. */
  let lastSourceId: string | undefined;
  const window = Math.max(1, Math.floor(options.window ?? DEFAULT_REPLAY_WINDOW));
  let lastId = options.afterId ?? 0;
  const store = new FrameStore(lastId + 1);
  const listeners = new Set<LogListener>();
  const historyEndListeners = new Set<() => void>();
  let historyEnd: number | undefined;
  let historyEntry: number | undefined;
  /** The window: the newest `window` entries (the store may still hold a few older ones in a block). */
  const oldest = () => Math.max(store.first, lastId - window + 1);
  const held = (seq: number): HeldEntry | undefined => {
    if (seq < oldest() || seq > lastId) return undefined;
    const frame = store.get(seq);
    return frame === undefined ? undefined : new HeldEntry(seq, frame);
  };
  return {
    epoch,
    window,
    sourced,
    startId: (options.afterId ?? 0) + 1,
    get lastId() {
      return lastId;
    },
    get oldestId() {
      return oldest();
    },
    append(event, sourceId) {
      if (sourced) {
        if (sourceId === undefined || !isStreamId(sourceId)) throw new Error(`an event of a sourced log needs a stream entry id, not ${String(sourceId)}`);
        if (lastSourceId !== undefined && compareStreamIds(sourceId, lastSourceId) <= 0)
          throw new Error(`the source id ${sourceId} is not after the log's newest, ${lastSourceId}`);
        lastSourceId = sourceId;
      }
      const id = ++lastId;
      if (event.type === "history_end" && historyEntry === undefined) historyEntry = id;
      const wireId = sourced ? sourceId! : formatEventId(epoch, id);
      const frame = sseFrame(wireId, event.type, JSON.stringify(event));
      store.push(id, frame);
      store.dropBefore(oldest());
      // Listeners get the event object itself: no parse on the live path.
      const live: LoggedEvent = { id, event, frame, wireId };
      for (const listener of listeners) listener(live);
      return live;
    },
    wireIdOf(seq) {
      if (!sourced) return formatEventId(epoch, seq);
      if (seq === lastId) return lastSourceId;
      return held(seq)?.wireId;
    },
    locate(sourceId) {
      if (!sourced) throw new Error("locate is for sourced logs");
      if (lastSourceId === undefined || compareStreamIds(sourceId, lastSourceId) > 0) return "ahead";
      const first = oldest();
      if (first > lastId || compareStreamIds(sourceId, held(first)!.wireId) < 0) return "behind";
      // The newest held entry whose id is not after `sourceId`: ids increase with the sequence number.
      let lo = first;
      let hi = lastId;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (compareStreamIds(held(mid)!.wireId, sourceId) <= 0) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    },
    covers(afterId) {
      return afterId >= oldest() - 1;
    },
    since(after) {
      return store.from(Math.max(after + 1, oldest())).map((f) => new HeldEntry(f.seq, f.frame));
    },
    get historyEnd() {
      return historyEnd;
    },
    get historyEntry() {
      return historyEntry;
    },
    endHistory() {
      if (historyEnd !== undefined) return;
      historyEnd = lastId;
      for (const listener of historyEndListeners) listener();
    },
    subscribe(listener, onHistoryEnd) {
      listeners.add(listener);
      if (onHistoryEnd !== undefined) historyEndListeners.add(onHistoryEnd);
      return () => {
        listeners.delete(listener);
        if (onHistoryEnd !== undefined) historyEndListeners.delete(onHistoryEnd);
      };
    },
  };
}
