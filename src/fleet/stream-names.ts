/**
 * The Redis names the relay writes and reads: the contract bots and
 * dashboards are written against (docs/fleet.md). Extend, never rename.
 */

/** The fleet index: one entry per session attach, state change and detach. */
export const SESSIONS_STREAM = "agy:sessions";

/** The consumer group every relay of a host reads its command stream through. */
export const COMMAND_GROUP = "agy-relay";

/** One conversation's events as the relay on `host` published them. */
export function eventsStream(host: string, conversationId: string): string {
  return `agy:events:${host}:${conversationId}`;
}

/** Commands for the relay(s) of `host`. */
export function commandsStream(host: string): string {
  return `agy:commands:${host}`;
}

/** The result of every command taken from `commandsStream(host)`. */
export function resultsStream(host: string): string {
  return `agy:results:${host}`;
}

/**
 * A hash: conversation id → the key of the last event published to its
 * stream, written in the same transaction as the event, so a restarted relay
 * knows where the stream ends even after trimming.
 */
export function cursorsKey(host: string): string {
  return `agy:relay:${host}:published`;
}

/** Marks a `requestId` as taken by one command entry (a retry of the same entry is told apart from a second request). */
export function requestKey(host: string, requestId: string): string {
  return `agy:relay:${host}:request:${requestId}`;
}

/** What `--host` may be: it becomes part of every key, so no `:` or spaces. */
export const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
