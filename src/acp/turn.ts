/**
 * One editor prompt, from typing it into agy's TUI to the edge that ends
 * agy's turn, and the ACP `stopReason` that ending gives.
 */
import type { StopReason } from "@agentclientprotocol/sdk";

export interface Turn {
  /** The prompt's text, whitespace collapsed: how agy's `user_message` for it is recognised. */
  readonly key: string;
  /** agy's `user_message` for this prompt has been seen: the edges that follow are this turn's. */
  started: boolean;
  /** The editor cancelled it. */
  cancelled: boolean;
  /** A stop reason a settled message gave (`max_tokens`, `refusal`), kept for the end. */
  stop: StopReason | undefined;
  /** Aborts the typing when the editor cancels before agy took the turn. */
  readonly typing: AbortController;
  readonly done: Promise<StopReason>;
  finish(reason: StopReason): void;
  fail(error: Error): void;
}

export function createTurn(text: string): Turn {
  let resolve!: (reason: StopReason) => void;
  let reject!: (error: Error) => void;
  const done = new Promise<StopReason>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A turn ends once: later edges (a cancel's timer, a late idle) change nothing.
  let settled = false;
  return {
    key: turnKey(text),
    started: false,
    cancelled: false,
    stop: undefined,
    typing: new AbortController(),
    done,
    finish(reason) {
      if (settled) return;
      settled = true;
      resolve(reason);
    },
    fail(error) {
      if (settled) return;
      settled = true;
      reject(error);
    },
  };
}

/** Whitespace collapsed: the TUI may fold a pasted turn's line ends. */
export function turnKey(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * agy's `plannerResponse.stopReason` (the mapper passes on anything but a
 * normal end) as an ACP stop reason, or undefined when it is an end_turn.
 */
export function stopReasonOf(agyStopReason: string | undefined): StopReason | undefined {
  if (agyStopReason === undefined) return undefined;
  if (/MAX_TOKENS|LENGTH/.test(agyStopReason)) return "max_tokens";
  if (/CONTENT_FILTER|SAFETY|RECITATION|BLOCKLIST|PROHIBITED|REFUS/.test(agyStopReason)) return "refusal";
  return undefined;
}
