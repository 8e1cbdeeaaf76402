/**
 * SSE event ids: `<epoch>-<seq>`, e.g. `mfz3k1q07f3a-41`. The epoch is chosen
 * once per run of `serve`; the sequence number counts per conversation within
 * the run. A bot that resumes across a restart sends an id of another epoch
 * and is replayed everything the new run holds, so no approval that arrived
 * while it was away is skipped; an id of this epoch beyond the newest event
 * was never sent by this run, and is refused rather than answered with
 * silence.
 */
import { randomBytes } from "node:crypto";

const EPOCH = /^[a-z0-9]{1,32}$/;
const ID = /^([a-z0-9]{1,32})-(\d{1,15})$/;

/** A new epoch: the start time in base 36 and 4 random hex digits, so two runs never share one. */
export function newEpoch(now: number = Date.now()): string {
  return `${now.toString(36)}${randomBytes(2).toString("hex")}`;
}

export function isEpoch(text: string): boolean {
  return EPOCH.test(text);
}

export function formatEventId(epoch: string, seq: number): string {
  return `${epoch}-${seq}`;
}

/** Where a `Last-Event-ID` says to resume in a log of `epoch` whose newest sequence number is `head`. */
export type ResumePoint =
  | { kind: "after"; seq: number }
  /** An id of an earlier run (another epoch, or a bare number from before epochs): replay from the start. */
  | { kind: "earlier_run" }
  | { kind: "never_issued"; detail: string }
  | { kind: "malformed"; detail: string };

export function resumePoint(header: string | undefined, epoch: string, head: number): ResumePoint {
  const value = header?.trim() ?? "";
  if (value === "") return { kind: "after", seq: 0 };
  if (/^\d{1,15}$/.test(value)) return { kind: "earlier_run" };
  const match = ID.exec(value);
  if (match === null) {
    return {
      kind: "malformed",
      detail: `Last-Event-ID must be an event id this API sent (like ${formatEventId(epoch, 1)}); omit it to get the conversation from the start`,
    };
  }
  if (match[1] !== epoch) return { kind: "earlier_run" };
  const seq = Number(match[2]);
  if (seq > head) {
    return {
      kind: "never_issued",
      detail: `Last-Event-ID ${value} was never sent by this server: the newest event of this conversation is ${formatEventId(epoch, head)}; resume with an id you received, or omit the header to get the conversation from the start`,
    };
  }
  return { kind: "after", seq };
}

/**
 * Ids a session's source gave its events (`serve --redis`: the Redis stream
 * entry id, `<ms>-<seq>`, e.g. `1733050000000-0`). They name the same event
 * in every run of `serve`, so a client resumes with one across a restart.
 * Compared as Redis does: the milliseconds, then the sequence number.
 */
const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;
const U64 = (1n << 64n) - 1n;

/** The two parts of a stream entry id, or undefined when `text` is not one. */
export function parseStreamId(text: string): readonly [bigint, bigint] | undefined {
  const match = STREAM_ID.exec(text);
  if (match === null) return undefined;
  const ms = BigInt(match[1]!);
  const seq = BigInt(match[2]!);
  return ms > U64 || seq > U64 ? undefined : [ms, seq];
}

export function isStreamId(text: string): boolean {
  return parseStreamId(text) !== undefined;
}

/** Negative, zero or positive as `a` is before, the same as, or after `b` (both must be stream ids). */
export function compareStreamIds(a: string, b: string): number {
  const x = parseStreamId(a);
  const y = parseStreamId(b);
  if (x === undefined || y === undefined) throw new Error(`not a stream entry id: ${x === undefined ? a : b}`);
  if (x[0] !== y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] === y[1] ? 0 : x[1] < y[1] ? -1 : 1;
}
