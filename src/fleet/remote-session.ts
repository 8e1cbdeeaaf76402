/**
 * A conversation on another host, acted on through Redis only: the shape
 * `serve`'s session hub takes (`SupervisedSession` in server/, matched
 * structurally — a front door imports no other front door), so `serve` can
 * offer the whole fleet. Answers go to the host's command stream and come
 * back as the relay's result.
 */
import type { MapperEvent } from "../mapper/index.js";
import { AgyBridgeError } from "../errors.js";
import type { FleetClient, FleetCommandRequest, PublishedEvent } from "./fleet-client.js";

/** An answer as the HTTP API takes it (server/contract.ts `InteractionAction`). */
export type RemoteAction =
  | { action: "approve"; scope?: string | undefined; instruction?: string | undefined }
  | { action: "deny"; instruction?: string | undefined }
  | { action: "answer"; optionIds: string[]; writeIn?: string | undefined };

export type RemoteAnswerResult =
  | { result: "delivered"; stepIndex: number }
  | { result: "already_resolved" | "timed_out" | "not_found"; stepIndex?: number; reason?: string };
export type RemoteTurnResult = { result: "delivered" | "unverified" | "failed"; reason: string };
export type RemoteInterruptResult = { result: "cancelled" | "denied" | "idle"; stepIndices?: number[]; reason?: string };

export interface RemoteSession {
  readonly host: string;
  readonly conversationId: string;
  /**
   * The conversation's published events from the start, then live ones; a
   * `resync` marker becomes an `events_dropped` diagnostic. One
   * `history_end` (which the relay does not publish) comes between: after
   * the entries up to the stream's newest when reading began, before any
   * later one — as a local session's history ends.
   */
  events(options: { signal: AbortSignal }): AsyncIterable<MapperEvent>;
  /** The same, each with the id of the stream entry that carried it (the `events_dropped` diagnostic has its `resync` entry's id): `serve`'s SSE ids. `history_end` has no entry, so no id. */
  eventEntries(options: { signal: AbortSignal }): AsyncIterable<{ id?: string | undefined; event: MapperEvent }>;
  /** The id of the stream's newest entry (undefined: it holds none). */
  newestEntryId(signal?: AbortSignal): Promise<string | undefined>;
  /** Every event the stream holds now, oldest first: a resync's fresh read of the conversation. */
  snapshot(signal: AbortSignal): Promise<MapperEvent[]>;
  respond(interactionId: string, action: RemoteAction, decidedBy?: string): Promise<RemoteAnswerResult>;
  sendTurn(text: string): Promise<RemoteTurnResult>;
  interrupt(): Promise<RemoteInterruptResult>;
  close(): Promise<void>;
}

export interface RemoteSessionOptions {
  client: FleetClient;
  host: string;
  conversationId: string;
  /** The principal of turns and interrupts (answers use their `decidedBy`); default `serve`. */
  principal?: string;
  /** How long a command waits for the relay's result (ms); default 30,000. */
  timeoutMs?: number;
}

/** Whether Redis stream entry id `a` (`<ms>-<seq>`) is after `b`. */
function isAfter(a: string, b: string): boolean {
  const [am = 0n, as = 0n] = a.split("-").map(BigInt);
  const [bm = 0n, bs = 0n] = b.split("-").map(BigInt);
  return am !== bm ? am > bm : as > bs;
}

const ANSWERS = new Set(["delivered", "already_resolved", "timed_out", "not_found"]);

export function createRemoteSession(options: RemoteSessionOptions): RemoteSession {
  const { client, host, conversationId } = options;
  const principal = options.principal ?? "serve";
  const send = async (request: Omit<FleetCommandRequest, "conversationId">) =>
    (await client.command(host, { ...request, conversationId }, { timeoutMs: options.timeoutMs ?? 30_000 })).result;
  const refused = (result: Record<string, unknown>): AgyBridgeError =>
    new AgyBridgeError(
      "invalid_argument",
      `the relay of host ${host} did not run the command (${String(result["result"])}): ${String(result["reason"] ?? "no reason given")}`,
    );
  const asEvent = (entry: PublishedEvent): MapperEvent =>
    entry.event.type === "resync"
      ? {
          type: "diagnostic",
          conversationId,
          code: "events_dropped",
          message: `The relay of host ${host} lost events while Redis was away (${entry.event.reason}); what follows was read again from agy.`,
        }
      : entry.event;
  const historyEnd: MapperEvent = { type: "history_end", conversationId };
  /** The stream's entries from the start, with `history_end` (no id) after the newest one it held when reading began. */
  const entries = async function* (signal: AbortSignal): AsyncGenerator<{ id?: string; event: MapperEvent }> {
    const last = await client.newest(host, conversationId);
    let ended = last === undefined;
    if (ended) yield { event: historyEnd };
    for await (const entry of client.events(host, conversationId, { signal })) {
      // Past it (the entry itself may have been trimmed meanwhile): the history ended before this one.
      if (!ended && isAfter(entry.id, last!)) {
        ended = true;
        yield { event: historyEnd };
      }
      yield { id: entry.id, event: asEvent(entry) };
      if (!ended && entry.id === last) {
        ended = true;
        yield { event: historyEnd };
      }
    }
  };
  return {
    host,
    conversationId,
    async *events({ signal }) {
      for await (const { event } of entries(signal)) yield event;
    },
    eventEntries: ({ signal }) => entries(signal),
    newestEntryId: () => client.newest(host, conversationId),
    async snapshot(signal) {
      return (await client.history(host, conversationId, { signal })).map(asEvent);
    },
    async respond(interactionId, action, decidedBy) {
      const body =
        action.action === "approve"
          ? action.scope === undefined
            ? {}
            : { scope: action.scope }
          : action.action === "deny"
            ? action.instruction === undefined
              ? {}
              : { instruction: action.instruction }
            : { options: action.optionIds, ...(action.writeIn === undefined ? {} : { writeIn: action.writeIn }) };
      const result = await send({ type: action.action, interactionId, body, principal: decidedBy ?? principal });
      if (!ANSWERS.has(result.result)) throw refused(result);
      return result as unknown as RemoteAnswerResult;
    },
    async sendTurn(text) {
      const result = await send({ type: "send_turn", body: { text }, principal });
      if (result.result !== "delivered" && result.result !== "unverified" && result.result !== "failed") throw refused(result);
      return { result: result.result, reason: String(result["reason"] ?? "") };
    },
    async interrupt() {
      const result = await send({ type: "interrupt", principal });
      if (result.result !== "cancelled" && result.result !== "denied" && result.result !== "idle") throw refused(result);
      return result as unknown as RemoteInterruptResult;
    },
    async close() {
      // Nothing held: each read and command owns its connection.
    },
  };
}
