/**
 * What a notifier is told: an interaction that needs a person, and later how
 * it ended. Notifiers never answer agy themselves — they call the
 * {@link AnswerInteraction} they were given, which goes through serve's hub,
 * so racing answers from a phone, a chat and the page deliver exactly once.
 */
import type { EventOf, InteractionOutcome, InteractionRequest } from "../mapper/index.js";

export type InteractionRequested = EventOf<"interaction_requested">;

/** An interaction waiting for a person. */
export interface PendingNotice {
  conversationId: string;
  interactionId: string;
  request: InteractionRequest;
  /** The card's deep link: serve's page address with `#/interactions/<interactionId>`. */
  url: string;
  /** The machine's host name. */
  host: string;
  /** True when this is the escalation's reminder, not the first notice. */
  escalated: boolean;
  /** The escalation, announced to the person: e.g. "If nobody answers within 5m, it will be denied." */
  escalation?: string;
}

/** How a noticed interaction ended, wherever it was answered. */
export interface ResolvedNotice {
  conversationId: string;
  interactionId: string;
  request: InteractionRequest;
  url: string;
  host: string;
  outcome: InteractionOutcome;
  /** Who answered, when agy-bridge delivered it (`page`, `telegram:<user>`, `policy:…`). */
  decidedBy?: string;
}

/** One channel that reaches a person: webhooks, Web Push, ntfy, Telegram. */
export interface Notifier {
  /** A short name for diagnostics and the audit log (`webhook:1`, `push`, `telegram`). */
  readonly name: string;
  /** Must not throw or block: a slow channel never holds up a session or another channel. */
  pending(notice: PendingNotice): void;
  resolved(notice: ResolvedNotice): void;
  /** Stops retries and polling; settles when in-flight requests are done or abandoned. */
  close(): Promise<void>;
}

/** The answer as serve's hub gives it back. */
export interface AnswerOutcome {
  /** `decided_by_policy`: serve's policy answers this request itself (docs/policy.md). */
  result: "delivered" | "already_resolved" | "timed_out" | "not_found" | "decided_by_policy";
  reason?: string | undefined;
}

/** Answers an interaction through serve (one delivery per interaction, whoever races). */
export type AnswerInteraction = (conversationId: string, interactionId: string, action: InteractionAction, decidedBy: string) => Promise<AnswerOutcome>;

/** What a notifier may answer: the subset of serve's actions a button can carry. */
export type InteractionAction = { action: "approve" } | { action: "deny"; instruction?: string } | { action: "answer"; optionIds: string[]; writeIn?: string };

/** The card's deep link under serve's page address. */
export function deepLink(pageUrl: string, interactionId: string): string {
  return `${pageUrl.replace(/\/+$/, "")}/#/interactions/${encodeURIComponent(interactionId)}`;
}
