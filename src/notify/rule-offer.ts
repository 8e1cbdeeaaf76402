/**
 * "Always allow" / "Always deny" beside Approve / Deny in channels outside
 * the page (Telegram, ntfy): the rule a press saves with its answer, shown
 * exactly as it will be saved (docs/notifications.md, "Remembering an
 * answer"). The rules themselves — proposal, file, audit — are serve's
 * (docs/policy.md, "Learned rules"); a channel gets them through
 * {@link RuleOffers} and never edits them.
 */
import type { PendingNotice } from "./notice.js";

export type RememberDecision = "approve" | "deny";

/** One rule a press may save with its answer. */
export interface OfferedRule {
  readonly decision: RememberDecision;
  /** The rule in words, exactly as it will be saved: "Always allow: `npm test` (this workspace)". */
  readonly text: string;
  /**
   * Saves the rule, once: a second call gives the first call's result. Call
   * it only after the answer was delivered. Rejects with a sentence when the
   * rules file cannot be written.
   */
  save(decidedBy: string): Promise<{ id: string }>;
}

/**
 * The rules a press may save with this notice's answer: "Always allow" first
 * when a rule may allow the request, then "Always deny". Empty when nothing
 * can be remembered (a question, several commands in one line, a file
 * outside the workspace). Given only by a serve that keeps learned rules
 * (`--policy`).
 */
export type RuleOffers = (notice: PendingNotice) => readonly OfferedRule[];

/** What a button of a decision says. */
export const REMEMBER_LABELS: Record<RememberDecision, string> = { approve: "Always allow", deny: "Always deny" };

/** "Approved; rule saved: Always allow: `npm test` (this workspace)". */
export function ruleSavedText(decision: RememberDecision, offered: OfferedRule): string {
  return `${decision === "approve" ? "Approved" : "Denied"}; rule saved: ${offered.text}`;
}
