/**
 * `GET /v1/sessions/{id}/events`: one conversation's log as SSE, resumed
 * with `Last-Event-ID`. A position the log's window still covers resumes
 * exactly. One it no longer covers (an id older than the window, or no id
 * once the window dropped the start) is served by rebuilding from a
 * snapshot — a fresh read of the conversation — announced by a `resync`
 * event, never by silently skipping (docs/http-api.md, "Resync"):
 *
 * 1. `event: resync` (no id): why, what the client sent, and how many
 *    snapshot events follow;
 * 2. the snapshot's events (no ids; the last one carries the id of the log's
 *    newest event when the read began, so a client that got the whole
 *    snapshot resumes after it);
 * 3. the log's later events, minus any the snapshot already showed.
 *
 * In a sourced log (`serve --redis`) the ids are the Redis stream entry ids
 * of the events: the same in every run of `serve`, so a client resumes with
 * one after a restart too. A restarted `serve` that has not read up to the
 * client's id yet keeps the client waiting until it has, and then sends
 * what follows the id; an id older than what the log holds is a resync.
 * Such a log has no entry for `history_end` (the stream holds none), so each
 * client is written an id-less `history_end` at the log's recorded end of
 * the history (`EventLog.historyEnd`) — or, resuming past it, right after
 * its backlog: once per connection, and again after a resync's snapshot.
 */
import { z } from "zod";
import type { MapperEvent } from "../mapper/index.js";
import { compareStreamIds, formatEventId, isStreamId, resumePoint } from "./event-id.js";
import type { EventLog } from "./event-log.js";
import { HttpProblem } from "./http-problem.js";

/** What the stream needs of a conversation. */
export interface StreamSource {
  readonly conversationId: string;
  readonly log: EventLog;
  /** A fresh read of the conversation as events (settled history and open interactions). */
  snapshot(signal: AbortSignal): Promise<MapperEvent[]>;
}

/** Where the writer goes: an SSE stream with backpressure (`sse-stream.ts`). */
export interface StreamSink {
  readonly closed: boolean;
  write(frame: string): boolean;
  end(comment?: string): void;
}

/** The `data:` of an SSE `resync` event (docs/http-api.md, "Resync"). */
export const ResyncSchema = z
  .object({
    conversationId: z.string(),
    reason: z
      .enum(["outside_window", "earlier_run"])
      .describe(
        "outside_window: the position is older than the replay window (or no Last-Event-ID was sent once the window dropped the start); earlier_run: an id of an earlier run of serve whose start this run no longer holds (with serve --redis: an id of serve's own `<epoch>-<seq>` kind, not a stream entry id)",
      ),
    lastEventId: z
      .string()
      .nullable()
      .describe(
        "where the client was: the Last-Event-ID it sent (null: none), or the last id it received when it fell behind mid-stream (with serve --redis, ids are Redis stream entry ids)",
      ),
    oldestEventId: z.string().nullable().describe("the oldest event the window still holds (null when it holds none)"),
    events: z.number().int().nonnegative().describe("how many snapshot events follow this one"),
    resumesAfter: z.string().describe("the id the last snapshot event (or this event, when none follow) carries; the stream continues after it"),
  })
  .describe(
    "Announces a rebuild: discard what you hold of the conversation; the next `events` messages are its state read afresh from agy (no ids but the last), then the live stream continues.",
  );

export type ResyncReason = z.infer<typeof ResyncSchema>["reason"];
export type ResyncBody = z.infer<typeof ResyncSchema>;

/**
 * Where a client resumes: after a sequence number the log covers; a resync;
 * or (sourced logs) after a source id the log has not read up to yet, so the
 * client waits for what follows it.
 */
export type ResumeStart = { after: number } | { resync: ResyncReason } | { ahead: string };

/**
 * Where a client resumes (see {@link ResumeStart}).
 * Throws a 400 `HttpProblem` for an id that is malformed or was never issued.
 */
export function resumeFrom(header: string | undefined, log: EventLog): ResumeStart {
  if (log.sourced) return resumeFromSource(header, log);
  const resume = resumePoint(header, log.epoch, log.lastId);
  if (resume.kind === "malformed" || resume.kind === "never_issued") throw new HttpProblem(400, "Bad Request", resume.detail);
  // No id, or one of an earlier run: from the start of what this run issued.
  const after = resume.kind === "after" && (header?.trim() ?? "") !== "" ? resume.seq : log.startId - 1;
  if (log.covers(after)) return { after };
  return { resync: resume.kind === "earlier_run" ? "earlier_run" : "outside_window" };
}

function resumeFromSource(header: string | undefined, log: EventLog): ResumeStart {
  const value = header?.trim() ?? "";
  if (isStreamId(value)) {
    const at = log.locate(value);
    if (at === "ahead") return { ahead: value };
    if (at === "behind") return { resync: "outside_window" };
    return { after: at };
  }
  // `<epoch>-<seq>` or a bare number: an id a serve gave before its sessions had stream ids.
  if (value !== "" && resumePoint(value, log.epoch, log.lastId).kind === "malformed") {
    throw new HttpProblem(
      400,
      "Bad Request",
      `Last-Event-ID must be an event id this API sent: the Redis stream entry id of the event (like 1733050000000-0); omit it to get the conversation from the start`,
    );
  }
  // No id, or one of an earlier kind: from the start of what this log holds.
  const after = log.startId - 1;
  if (log.covers(after)) return { after };
  return { resync: value === "" ? "outside_window" : "earlier_run" };
}

/**
 * A 400 for a sourced log's id that the source never issued: `newest` is the
 * source's newest id now (undefined: it has none). Undefined when `id` is not
 * after it (the log has only not read that far yet).
 */
export function neverIssued(id: string, newest: string | undefined): HttpProblem | undefined {
  if (newest !== undefined && compareStreamIds(id, newest) <= 0) return undefined;
  return new HttpProblem(
    400,
    "Bad Request",
    `Last-Event-ID ${id} was never sent: ${newest === undefined ? "the conversation's Redis stream holds no entry" : `the newest entry of the conversation's Redis stream is ${newest}`}; resume with an id you received, or omit the header to get the conversation from the start`,
  );
}

/**
 * The identity of an event, for the events after a snapshot that the
 * snapshot already showed: one key per step event, interaction and delta.
 * Undefined for events without one (they are always sent).
 */
export function eventKey(event: MapperEvent): string | undefined {
  switch (event.type) {
    case "interaction_requested":
    case "interaction_resolved":
      return `${event.type}\u0000${event.interactionId}`;
    case "status":
      return event.stepIndex === undefined ? undefined : `status\u0000${event.trajectoryId}\u0000${event.stepIndex}\u0000${event.status}\u0000${event.reason}`;
    case "history_end":
      return undefined;
    default: {
      const e = event as { trajectoryId?: string; stepIndex?: number };
      if (e.stepIndex === undefined) return undefined;
      return `${event.type}\u0000${e.trajectoryId ?? ""}\u0000${e.stepIndex}`;
    }
  }
}

function frameOf(event: MapperEvent, id?: string): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export interface FollowOptions {
  source: StreamSource;
  sink: StreamSink;
  /** The client's `Last-Event-ID`. */
  lastEventId: string | undefined;
  /** Where to resume (from {@link resumeFrom}, computed before the response started). */
  start: ResumeStart;
  /** Aborted when the stream closes. */
  signal: AbortSignal;
  /** Told when the snapshot read fails (the stream then ends: the client reconnects and tries again). */
  onProblem?: (message: string) => void;
}

/** A follower: `flush` writes what the client can take (call it on every append); `drained` after a full buffer drained. */
export interface Follower {
  flush(): void;
  drained(): void;
}

/**
 * Follows the log for one client. With a resync start, the snapshot is read
 * first; the log's appends meanwhile wait in the log (its window is far
 * larger than what a read takes, and if not, the client resyncs again).
 */
export function followLog(options: FollowOptions): Follower {
  const { source, sink } = options;
  const log = source.log;
  const { start } = options;
  let cursor = "after" in start ? start.after : "ahead" in start ? log.lastId : -1;
  /** A source id the log has not read up to yet: entries up to it are not for this client. */
  let ahead = "ahead" in start ? start.ahead : undefined;
  /** The wire id of the entry at `cursor`, for a resync's `lastEventId` once the window dropped that entry. */
  let cursorId: string | null = cursor < 0 ? null : (log.wireIdOf(cursor) ?? (options.lastEventId?.trim() || null));
  let waiting = false;
  /** Events the snapshot showed, skipped when the log repeats them; dropped once the cursor passes `dedupeUntil`. */
  let shown: Set<string> | undefined;
  let dedupeUntil = 0;
  /** Whether this client got the log's id-less `history_end` (sourced logs: see {@link EventLog.historyEnd}). */
  let historyEndSent = false;
  /**
   * The boundary is due once the cursor is at the end of the history — or,
   * for a client that resumed past it, at the end of its backlog — so it
   * comes after the history and before the live events, once per connection
   * (and once more after a resync, which rebuilds the conversation).
   */
  const historyEndDue = (): boolean => {
    const end = log.historyEnd;
    return !historyEndSent && end !== undefined && cursor >= end && (cursor === end || cursor === log.lastId);
  };
  /** Writes the id-less boundary: the client's Last-Event-ID stays the last entry's. False when the buffer is now full. */
  const writeHistoryEnd = (): boolean => {
    historyEndSent = true;
    if (sink.write(frameOf({ type: "history_end", conversationId: source.conversationId }))) return true;
    waiting = true;
    return false;
  };

  const flush = (): void => {
    if (cursor < 0 || waiting || sink.closed) return;
    if (ahead !== undefined) {
      const at = log.locate(ahead);
      // This serve has not read up to the client's position yet (it restarted, and reads the stream again).
      if (at === "ahead") return;
      const last = ahead;
      ahead = undefined;
      if (at === "behind") {
        cursor = -1;
        void resync("outside_window", last);
        return;
      }
      cursor = at;
      cursorId = last;
    }
    if (!log.covers(cursor)) {
      // This client fell out of the window while it was not reading: resync it, never skip.
      const last = log.sourced ? cursorId : formatEventId(log.epoch, cursor);
      cursor = -1;
      void resync("outside_window", last);
      return;
    }
    for (const entry of log.since(cursor)) {
      if (historyEndDue() && !writeHistoryEnd()) return;
      cursor = entry.id;
      if (log.sourced) cursorId = entry.wireId;
      if (shown !== undefined) {
        if (entry.id > dedupeUntil) shown = undefined;
        else {
          const key = eventKey(entry.event);
          if (key !== undefined && shown.has(key)) continue;
        }
      }
      if (!sink.write(entry.frame)) {
        waiting = true;
        return;
      }
    }
    if (historyEndDue()) writeHistoryEnd();
  };

  async function resync(reason: ResyncReason, lastEventId: string | null): Promise<void> {
    const from = log.lastId;
    // Read now: the window may drop it while the snapshot is read.
    const fromId = log.wireIdOf(from) ?? formatEventId(log.epoch, from);
    let events: MapperEvent[];
    try {
      // The deltas of a message in flight are not part of the state: its later deltas and its `message` follow from the log.
      events = (await source.snapshot(options.signal)).filter((e) => e.type !== "message_delta" && e.type !== "reasoning_delta");
    } catch (error) {
      if (sink.closed) return;
      options.onProblem?.(`conversation ${source.conversationId}: the snapshot for a resync failed: ${(error as Error).message}`);
      sink.end("resync failed; reconnect to try again");
      return;
    }
    if (sink.closed) return;
    const resumesAfter = fromId;
    const oldest = log.oldestId <= log.lastId ? (log.wireIdOf(log.oldestId) ?? null) : null;
    const body: ResyncBody = {
      conversationId: source.conversationId,
      reason,
      lastEventId,
      oldestEventId: oldest,
      events: events.length,
      resumesAfter,
    };
    let full = !sink.write(`${events.length === 0 ? `id: ${resumesAfter}\n` : ""}event: resync\ndata: ${JSON.stringify(body)}\n\n`);
    shown = new Set();
    // The snapshot is the conversation read afresh: the boundary after it is due again.
    historyEndSent = false;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const key = eventKey(event);
      if (key !== undefined) shown.add(key);
      // Written whole even past a full buffer: the snapshot is bounded by the conversation, and the socket drains it.
      full = !sink.write(frameOf(event, i === events.length - 1 ? resumesAfter : undefined));
    }
    // A log that holds its `history_end` as an entry before the resume point: the rebuilt history ends here.
    if (!log.sourced && log.historyEntry !== undefined && log.historyEntry <= from) {
      full = !sink.write(frameOf({ type: "history_end", conversationId: source.conversationId }));
    }
    // Whatever the log appended while the snapshot was read may repeat it; later appends are newer than the read.
    dedupeUntil = log.lastId;
    if (!log.covers(from)) {
      // The window moved past the read while it ran: the snapshot is already stale, read again.
      void resync("outside_window", lastEventId);
      return;
    }
    cursor = from;
    cursorId = resumesAfter;
    // A full buffer drains first; its drain calls flush.
    waiting = full;
    flush();
  }

  if ("resync" in options.start) void resync(options.start.resync, options.lastEventId?.trim() || null);
  return {
    flush,
    drained() {
      waiting = false;
      flush();
    },
  };
}
