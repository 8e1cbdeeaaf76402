/**
 * The rules Telegram and ntfy offer beside Approve / Deny (docs/notifications.md,
 * "Remembering an answer"): the narrowest rule the policy layer proposes for
 * the request, in the default scope, worded exactly as it will be saved, and
 * saved into serve's learned rules once the answer was delivered. The same
 * proposal and store as `remember` over HTTP (rules-routes.ts).
 */
import { AgyBridgeError } from "../errors.js";
import type { OfferedRule, RememberDecision, RuleOffers } from "../notify/rule-offer.js";
import type { PendingNotice } from "../notify/notice.js";
import { policyRequestOf, proposeRule, type LearnedScope, type PolicyRequest, type RequestPlace, type RuleProposal } from "../policy/index.js";
import { auditRequestOf, type LearnedRulesApi } from "./rules-routes.js";

export interface RuleOffersOptions {
  rules: LearnedRulesApi;
  /** Where a conversation's requests come from (its workspace), for the rule's scope. */
  place(conversationId: string): RequestPlace;
  /** The step type of an interaction's request (a file rule's operation), when known. */
  stepTypeOf?(interactionId: string): string | undefined;
}

const SCOPE_WORDS: Record<LearnedScope, string> = { conversation: "this conversation only", workspace: "this workspace", everywhere: "everywhere" };
const DECISION_WORDS: Record<RememberDecision, string> = { approve: "Always allow", deny: "Always deny" };

/** "Always allow: `npm test` (this workspace)"; a file rule names its operation: "(edit, this workspace)". */
export function offerText(decision: RememberDecision, proposal: RuleProposal): string {
  const where = [...(proposal.operation === undefined ? [] : [proposal.operation]), SCOPE_WORDS[proposal.scope]].join(", ");
  return `${DECISION_WORDS[decision]}: \`${proposal.match}\` (${where})`;
}

/** Offers per interaction, so a reminder offers (and saves) the very rule the first message showed. */
const KEPT = 1000;
/** A rule too long to show whole in a chat message or a notification is not offered (it is remembered on the page). */
const MAX_TEXT = 1000;

export function createRuleOffers(options: RuleOffersOptions): RuleOffers {
  const kept = new Map<string, readonly OfferedRule[]>();
  const offer = (notice: PendingNotice, request: PolicyRequest, place: RequestPlace, decision: RememberDecision): OfferedRule | undefined => {
    let proposal: RuleProposal;
    try {
      proposal = proposeRule(request, place, { decision });
    } catch (error) {
      // No rule can cover it exactly (several commands, a wildcard, outside the workspace): nothing is offered.
      if (error instanceof AgyBridgeError) return undefined;
      throw error;
    }
    const text = offerText(decision, proposal);
    if (text.length > MAX_TEXT) return undefined;
    let saving: Promise<{ id: string }> | undefined;
    return {
      decision,
      text,
      save(decidedBy) {
        saving ??= options.rules
          .save({ decision, proposal, place, addedBy: decidedBy, fromRequest: notice.interactionId, request: auditRequestOf(request) })
          .then((saved) => ({ id: saved.id }));
        return saving;
      },
    };
  };
  return (notice) => {
    const known = kept.get(notice.interactionId);
    if (known !== undefined) return known;
    if (notice.request.kind !== "permission") return [];
    const request = policyRequestOf(notice.request, options.stepTypeOf?.(notice.interactionId) ?? "");
    const place = options.place(notice.conversationId);
    const offers = (["approve", "deny"] as const).map((decision) => offer(notice, request, place, decision)).filter((o) => o !== undefined);
    kept.set(notice.interactionId, offers);
    while (kept.size > KEPT) kept.delete(kept.keys().next().value as string);
    return offers;
  };
}
