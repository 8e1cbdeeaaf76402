/**
 * The other side of the relay: what a bot, a dashboard or `serve --redis`
 * needs to read the fleet and act on it through Redis alone — the fleet
 * index, one conversation's events (from any entry id, so a reader resumes
 * across its own restarts), and commands sent to a host with their result
 * awaited. Written against the stream layout (docs/fleet.md), nothing else.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import { MapperEventSchema, type MapperEvent } from "../mapper/index.js";
import type { CommandType } from "./fleet-command.js";
import type { FleetState } from "./conversation-publisher.js";
import { commandsStream, eventsStream, resultsStream, SESSIONS_STREAM } from "./stream-names.js";
import { AgyBridgeError } from "../errors.js";

/** A conversation as the fleet index says it is now. */
export interface FleetIndexEntry {
  host: string;
  conversationId: string;
  state: FleetState;
  /** When the index last said something about it (ISO 8601). */
  time: string;
}

/** One entry of `agy:events:<host>:<conversationId>`. */
export interface PublishedEvent {
  /** The stream entry id: resume after it. */
  id: string;
  key: string;
  /** The event, or the relay's `resync` marker. */
  event: MapperEvent | { type: "resync"; reason: string };
}

export interface FleetCommandRequest {
  type: CommandType;
  conversationId: string;
  interactionId?: string;
  body?: Record<string, unknown>;
  /** Who issues it: the relay records `relay:<principal>` as who decided. */
  principal: string;
  /** Default a new UUID. */
  requestId?: string;
}

export interface FleetCommandOutcome {
  requestId: string;
  commandId: string;
  /** The relay's result JSON (docs/fleet.md). */
  result: Record<string, unknown> & { result: string };
}

export interface FleetClientOptions {
  /** Non-blocking calls; each blocking read duplicates it. */
  redis: Redis;
  /**
   * How long one blocking read waits for an entry before it asks again (ms);
   * default 30,000. An entry ends the wait at once, and a reader's signal
   * ends it too (it disconnects the reader), so this only sets how often an
   * idle reader asks: each one is a command for Redis and for this process,
   * and `serve --redis` keeps a reader per session (with a 1 s wait, a
   * thousand idle sessions cost serve and Redis a thousand commands a
   * second).
   */
  blockMs?: number;
}

export interface FleetClient {
  /** The fleet now: the last index entry of each conversation not detached. */
  sessions(): Promise<FleetIndexEntry[]>;
  /** A conversation's entries after `after` (default: from the start), then live ones, until `signal` aborts. */
  events(host: string, conversationId: string, options: { after?: string; signal: AbortSignal }): AsyncIterable<PublishedEvent>;
  /** Every entry the conversation's stream holds now, oldest first (read in pages; no blocking). */
  history(host: string, conversationId: string, options?: { signal?: AbortSignal }): Promise<PublishedEvent[]>;
  /** The id of the newest entry of the conversation's stream (undefined: it holds none). */
  newest(host: string, conversationId: string): Promise<string | undefined>;
  /** Sends a command to `host` and waits (up to `timeoutMs`, default 30,000) for its result. */
  command(host: string, request: FleetCommandRequest, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<FleetCommandOutcome>;
}

type Raw = [string, string[]];

function fields(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) if (!(flat[i]! in out)) out[flat[i]!] = flat[i + 1]!;
  return out;
}

const ResyncSchema = z.object({ type: z.literal("resync"), reason: z.string() });

/** A relay's result as it is written to `agy:results:<host>` (docs/fleet.md): a JSON object with a string `result`. */
const ResultSchema = z.looseObject({ result: z.string() });

/** Why `value` is not an event, as a short phrase: its JSON kind, or the first problem the schema found. */
function whyNotEvent(value: unknown, issues: readonly z.core.$ZodIssue[]): string {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `its event field is ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}, not an event object`;
  const type = (value as { type?: unknown }).type;
  const issue = issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  return `its ${typeof type === "string" ? `${JSON.stringify(type.slice(0, 40))} ` : ""}event does not match the event schema (${issue?.message ?? "invalid"}${where})`;
}

/**
 * One stream entry read into a published event. An entry that is not a
 * valid event (written by hand, by a bot that may not, or by a newer relay)
 * is never dropped in silence and never handed on as an event: it becomes an
 * `invalid_entry` diagnostic of the stream's conversation, with its entry id,
 * and the entries after it are read as usual.
 */
function published(id: string, flat: readonly string[], stream: string, conversationId: string): PublishedEvent {
  const f = fields(flat);
  const key = f["key"] ?? "";
  const invalid = (why: string): PublishedEvent => ({
    id,
    key,
    event: {
      type: "diagnostic",
      conversationId,
      code: "invalid_entry",
      message: `Entry ${id} of ${stream} was skipped: ${why}. Only the relay may write this stream; check the ACL of whoever wrote it (docs/fleet.md).`,
    },
  });
  const text = f["event"];
  if (text === undefined) return invalid("it has no event field");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid("its event field is not JSON");
  }
  if (ResyncSchema.safeParse(value).success) return { id, key, event: value as PublishedEvent["event"] };
  const parsed = MapperEventSchema.safeParse(value);
  if (!parsed.success) return invalid(whyNotEvent(value, parsed.error.issues));
  // The JSON as published (fields this version does not know are kept), now known to be an event.
  return { id, key, event: value as MapperEvent };
}

/** The id just before `id`'s millisecond: an XREAD from it sees every entry written at or after that time. */
function justBefore(id: string): string {
  const ms = Number(id.split("-")[0]);
  return ms > 0 ? `${ms - 1}-0` : "0-0";
}

export function createFleetClient(options: FleetClientOptions): FleetClient {
  const { redis } = options;
  const blockMs = options.blockMs ?? 30_000;

  const blockingReads = async function* (stream: string, after: string, signal: AbortSignal): AsyncGenerator<Raw> {
    const reader = redis.duplicate();
    reader.on("error", () => undefined);
    const stop = () => reader.disconnect();
    signal.addEventListener("abort", stop, { once: true });
    let last = after;
    try {
      while (!signal.aborted) {
        let reply: [string, Raw[]][] | null;
        try {
          reply = (await reader.xread("COUNT", 256, "BLOCK", blockMs, "STREAMS", stream, last)) as [string, Raw[]][] | null;
        } catch (error) {
          if (signal.aborted) return;
          throw AgyBridgeError.from(error, "transport");
        }
        for (const [, entries] of reply ?? []) {
          for (const entry of entries) {
            last = entry[0];
            yield entry;
          }
        }
      }
    } finally {
      signal.removeEventListener("abort", stop);
      reader.disconnect();
    }
  };

  return {
    async sessions() {
      const raw = (await redis.xrange(SESSIONS_STREAM, "-", "+")) as Raw[];
      const latest = new Map<string, FleetIndexEntry & { type: string }>();
      for (const [, flat] of raw) {
        const f = fields(flat);
        if (f["host"] === undefined || f["conversationId"] === undefined) continue;
        latest.set(`${f["host"]}\u0000${f["conversationId"]}`, {
          type: f["type"] ?? "",
          host: f["host"],
          conversationId: f["conversationId"],
          state: (f["state"] ?? "idle") as FleetState,
          time: f["time"] ?? "",
        });
      }
      return [...latest.values()].filter((entry) => entry.type !== "session.detached").map(({ type: _type, ...entry }) => entry);
    },

    async *events(host, conversationId, { after, signal }) {
      const stream = eventsStream(host, conversationId);
      for await (const [id, flat] of blockingReads(stream, after ?? "0-0", signal)) yield published(id, flat, stream, conversationId);
    },

    async history(host, conversationId, { signal } = {}) {
      const stream = eventsStream(host, conversationId);
      const out: PublishedEvent[] = [];
      let from = "-";
      for (;;) {
        if (signal?.aborted === true) throw new AgyBridgeError("aborted", `reading ${stream} was cancelled`);
        let page: Raw[];
        try {
          page = (await redis.xrange(stream, from, "+", "COUNT", 1000)) as Raw[];
        } catch (error) {
          throw AgyBridgeError.from(error, "transport");
        }
        for (const [id, flat] of page) out.push(published(id, flat, stream, conversationId));
        if (page.length < 1000) return out;
        from = `(${page.at(-1)![0]}`;
      }
    },

    async newest(host, conversationId) {
      let last: Raw[];
      try {
        last = (await redis.xrevrange(eventsStream(host, conversationId), "+", "-", "COUNT", 1)) as Raw[];
      } catch (error) {
        throw AgyBridgeError.from(error, "transport");
      }
      return last[0]?.[0];
    },

    async command(host, request, { timeoutMs = 30_000, signal } = {}) {
      const requestId = request.requestId ?? randomUUID();
      const body = JSON.stringify(request.body ?? {});
      const commandId = (await redis.xadd(
        commandsStream(host),
        "*",
        "requestId",
        requestId,
        "type",
        request.type,
        "conversationId",
        request.conversationId,
        ...(request.interactionId === undefined ? [] : ["interactionId", request.interactionId]),
        "body",
        body,
        "principal",
        request.principal,
      ))!;
      const deadline = AbortSignal.timeout(timeoutMs);
      const until = signal === undefined ? deadline : AbortSignal.any([deadline, signal]);
      // Results are written after their command, on the same Redis clock: read from just before it.
      for await (const [, flat] of blockingReads(resultsStream(host), justBefore(commandId), until)) {
        const f = fields(flat);
        if (f["commandId"] !== commandId) continue;
        let value: unknown;
        try {
          value = JSON.parse(f["result"] ?? "");
        } catch {
          value = undefined;
        }
        const result = ResultSchema.safeParse(value);
        if (!result.success) {
          throw new AgyBridgeError(
            "transport",
            `the result entry for command ${commandId} in ${resultsStream(host)} is not a JSON object with a result field, so what the relay did is unknown; look for the command's effect in the conversation's events before sending it again`,
          );
        }
        return { requestId, commandId, result: result.data as FleetCommandOutcome["result"] };
      }
      if (signal?.aborted === true)
        throw new AgyBridgeError(
          "aborted",
          `the command ${commandId} was sent, and waiting for its result was cancelled; its result will be in ${resultsStream(host)}`,
        );
      throw new AgyBridgeError(
        "timeout",
        `no relay of host ${host} answered command ${commandId} within ${timeoutMs} ms; is \`agy-bridge relay --host ${host}\` running? The command stays queued and runs when one starts`,
      );
    },
  };
}
