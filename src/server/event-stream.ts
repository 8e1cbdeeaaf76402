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
 */
import { z } from "zod";
import type { MapperEvent } from "../mapper/index.js";
import { formatEventId, resumePoint } from "./event-id.js";
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
    reason: z.enum(["outside_window", "earlier_run"]).describe("outside_window: the position is older than the replay window (or no Last-Event-ID was sent once the window dropped the start); earlier_run: an id of an earlier run of serve whose start this run no longer holds"),
    lastEventId: z.string().nullable().describe("where the client was: the Last-Event-ID it sent (null: none), or the last id it received when it fell behind mid-stream"),
    oldestEventId: z.string().nullable().describe("the oldest event the window still holds (null when it holds none)"),
    events: z.number().int().nonnegative().describe("how many snapshot events follow this one"),
    resumesAfter: z.string().describe("the id the last snapshot event (or this event, when none follow) carries; the stream continues after it"),
  })
  .describe("Announces a rebuild: discard what you hold of the conversation; the next `events` messages are its state read afresh from agy (no ids but the last), then the live stream continues.");

export type ResyncReason = z.infer<typeof ResyncSchema>["reason"];
export type ResyncBody = z.infer<typeof ResyncSchema>;

/**
 * Where a client resumes: a sequence number the log covers, or a resync.
 * Throws a 400 `HttpProblem` for an id that is malformed or was never issued.
 */
export function resumeFrom(header: string | undefined, log: EventLog): { after: number } | { resync: ResyncReason } {
  const resume = resumePoint(header, log.epoch, log.lastId);
  if (resume.kind === "malformed" || resume.kind === "never_issued") throw new HttpProblem(400, "Bad Request", resume.detail);
  // No id, or one of an earlier run: from the start of what this run issued.
  const after = resume.kind === "after" && (header?.trim() ?? "") !== "" ? resume.seq : log.startId - 1;
  if (log.covers(after)) return { after };
  return { resync: resume.kind === "earlier_run" ? "earlier_run" : "outside_window" };
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
  start: { after: number } | { resync: ResyncReason };
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
  let cursor = "after" in options.start ? options.start.after : -1;
  let waiting = false;
  /** Events the snapshot showed, skipped when the log repeats them; dropped once the cursor passes `dedupeUntil`. */
  let shown: Set<string> | undefined;
  let dedupeUntil = 0;

  const flush = (): void => {
    if (cursor < 0 || waiting || sink.closed) return;
    if (!log.covers(cursor)) {
      // This client fell out of the window while it was not reading: resync it, never skip.
      const last = formatEventId(log.epoch, cursor);
      cursor = -1;
      void resync("outside_window", last);
      return;
    }
    for (const entry of log.since(cursor)) {
      cursor = entry.id;
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
  };

  async function resync(reason: ResyncReason, lastEventId: string | null): Promise<void> {
    const from = log.lastId;
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
    const resumesAfter = formatEventId(log.epoch, from);
    const oldest = log.oldestId <= log.lastId ? formatEventId(log.epoch, log.oldestId) : null;
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
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const key = eventKey(event);
      if (key !== undefined) shown.add(key);
      // Written whole even past a full buffer: the snapshot is bounded by the conversation, and the socket drains it.
      full = !sink.write(frameOf(event, i === events.length - 1 ? resumesAfter : undefined));
    }
    // Whatever the log appended while the snapshot was read may repeat it; later appends are newer than the read.
    dedupeUntil = log.lastId;
    if (!log.covers(from)) {
      // The window moved past the read while it ran: the snapshot is already stale, read again.
      void resync("outside_window", lastEventId);
      return;
    }
    cursor = from;
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
