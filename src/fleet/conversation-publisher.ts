/**
 * Publishes one followed conversation to `agy:events:<host>:<conversationId>`.
 *
 * Resume: the relay reads the conversation from the start (the session's
 * history), and before publishing it learns what an earlier run already
 * wrote: the keys of the stream's entries and the last published key
 * recorded in `agy:relay:<host>:published`. A history event at or before
 * that last key, or whose key is in the stream, is skipped; the rest is
 * appended in order. Each batch of entries and the new last key go in one
 * script, so the record never runs ahead of or behind the stream.
 *
 * Redis away: events are queued (the session is never waited on) up to
 * `bufferLimit`; past it the queue is dropped and `onGap` is told, so the
 * relay marks the gap with a `resync` entry and reads the conversation again.
 */
import type { Redis } from "ioredis";
import type { MapperEvent } from "../mapper/index.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";
import { createKeyer } from "./event-key.js";
import { cursorsKey, eventsStream } from "./stream-names.js";

/** A session's state as the fleet index names it. */
export type FleetState = "idle" | "running" | "waiting" | "gone";

export interface PublisherOptions {
  redis: Redis;
  host: string;
  /** The conversation as attached (the stream resumed from). */
  conversationId: string;
  /** The session's events, history first, ending with one `history_end` before live events. */
  events: AsyncIterable<MapperEvent>;
  /** Approximate length each events stream is trimmed to (`XADD … MAXLEN ~`). */
  maxLen: number;
  /** Events held while Redis is away before the relay gives up and resyncs. */
  bufferLimit: number;
  /** Told the state after the history (`attached`) and on each change after it. */
  onState(state: FleetState, phase: "attached" | "changed"): void;
  /** Redis was away too long: queued events were dropped; the relay marks the gap and reads the conversation again. */
  onGap(reason: string): void;
  /** Every live event, after the requests still open at attach (for the audit log). */
  observe?: (event: MapperEvent) => void;
  /** A write failed; retried. */
  onProblem?: (message: string) => void;
  /** Waits between retries of a failed write (ms); default grows 100 → 2000. */
  retryDelay?: (attempt: number) => number;
}

export interface Publisher {
  /** Entries written by this publisher. */
  readonly published: number;
  /** Settles when the events end (or `stop()`), after the queue is written. */
  readonly done: Promise<void>;
  stop(): void;
}

interface Entry {
  key: string;
  event: MapperEvent;
}

const BATCH = 256;

/**
 * A batch of entries and the new last key, in one script: Redis runs it
 * without interleaving, and a failed XADD stops it before the cursor moves.
 * KEYS: the cursors hash, then each entry's stream; ARGV: MAXLEN, the
 * cursor's field and value, then key, type and event of each entry.
 */
const APPEND = `
for i = 2, #KEYS do
  local a = 4 + (i - 2) * 3
  redis.call('XADD', KEYS[i], 'MAXLEN', '~', ARGV[1], '*', 'key', ARGV[a], 'type', ARGV[a + 1], 'event', ARGV[a + 2])
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return #KEYS - 1
`;

export function stateOf(event: MapperEvent): FleetState | undefined {
  if (event.type !== "status") return undefined;
  if (event.status === "failed") return event.reason === "server_gone" ? "gone" : "idle";
  return event.status;
}

export function startPublisher(options: PublisherOptions): Publisher {
  const { redis, host, maxLen, bufferLimit } = options;
  const retryDelay = options.retryDelay ?? ((attempt: number) => Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
  let published = 0;
  let stopped = false;
  let gap = false;
  let queue: Entry[] = [];
  /** Live events in the queue. */
  let live = 0;
  let draining: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  const write = async (batch: Entry[]): Promise<void> => {
    const last = batch[batch.length - 1]!;
    const keys = [cursorsKey(host), ...batch.map(({ event }) => eventsStream(host, event.conversationId))];
    const args: (string | number)[] = [maxLen, last.event.conversationId, last.key];
    for (const { key, event } of batch) args.push(key, event.type, JSON.stringify(event));
    for (let attempt = 0; ; attempt++) {
      try {
        await redis.eval(APPEND, keys.length, ...keys, ...args);
        published += batch.length;
        return;
      } catch (error) {
        // The reply can be lost after Redis ran the script: the cursor says whether it did.
        const cursor = await redis.hget(cursorsKey(host), last.event.conversationId).catch(() => undefined);
        if (cursor === last.key) {
          published += batch.length;
          return;
        }
        if (stopped && attempt > 2) return;
        options.onProblem?.(`publishing ${batch.length} event(s) of ${last.event.conversationId} failed (${(error as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, retryDelay(attempt)));
      }
    }
  };

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.splice(0, BATCH);
      await write(batch);
      live = Math.min(live, queue.length);
    }
  };
  const kick = (): void => {
    if (draining !== undefined) return;
    draining = drain().finally(() => {
      draining = undefined;
      if (queue.length > 0) kick();
      wake?.();
    });
  };
  /** `replay`: part of the history read at attach, already held in memory by the session, so not counted against the bound. */
  const enqueue = (entry: Entry, replay = false): void => {
    if (gap) return;
    queue.push(entry);
    if (!replay) live++;
    // A burst while Redis answers is written in a moment; the bound is for Redis away (or ten times it, for a Redis that cannot keep up).
    if ((live > bufferLimit && redis.status !== "ready") || live > bufferLimit * 10) {
      gap = true;
      queue = [];
      live = 0;
      options.onGap(
        `Redis was away or too slow while more than ${bufferLimit} events waited; events were dropped, and the relay read the conversation again after the gap`,
      );
      return;
    }
    kick();
  };

  const run = async (): Promise<void> => {
    const stream = eventsStream(host, options.conversationId);
    const [entries, last] = await Promise.all([
      redis.xrange(stream, "-", "+") as Promise<[string, string[]][]>,
      redis.hget(cursorsKey(host), options.conversationId),
    ]);
    const known = new Set<string>();
    for (const [, fields] of entries) {
      const at = fields.indexOf("key");
      if (at >= 0 && at % 2 === 0) known.add(fields[at + 1]!);
    }
    const keyer = createKeyer();
    const history: Entry[] = [];
    let inHistory = true;
    let state: FleetState = "idle";
    for await (const event of options.events) {
      if (stopped || gap) break;
      if (!inHistory) options.observe?.(event);
      if (event.type === "history_end") {
        if (inHistory) {
          inHistory = false;
          // The audit log sees what a background reader would: the requests open now, then live events — never old decisions again.
          if (options.observe !== undefined) for (const request of openRequests(history)) options.observe(request);
          const upTo = last === null ? -1 : history.findLastIndex((entry) => entry.key === last);
          history.forEach((entry, i) => {
            if (i > upTo && !known.has(entry.key)) enqueue(entry, true);
          });
          history.length = 0;
          options.onState(state, "attached");
        }
        continue;
      }
      const key = keyer.key(event);
      if (key === undefined) continue;
      const next = stateOf(event);
      if (inHistory) {
        if (next !== undefined) state = next;
        history.push({ key, event });
        continue;
      }
      enqueue({ key, event });
      if (next !== undefined && next !== state) {
        state = next;
        options.onState(state, "changed");
      }
    }
  };
  const done = run()
    .catch((error: unknown) => {
      if (!stopped) options.onProblem?.(`following ${options.conversationId} stopped: ${(error as Error).message}`);
    })
    .then(async () => {
      while (draining !== undefined) await new Promise<void>((r) => (wake = r));
    });
  return {
    get published() {
      return published;
    },
    done,
    stop() {
      stopped = true;
    },
  };
}

/** The `interaction_requested` events of `history` that no `interaction_resolved` in it settled (the ledger's fold, each once). */
function openRequests(history: readonly Entry[]): MapperEvent[] {
  const ledger = createInteractionLedger();
  for (const { event } of history) ledger.apply(event);
  return ledger.openAll();
}
