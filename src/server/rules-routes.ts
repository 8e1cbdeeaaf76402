/**
 * Learned rules over HTTP (docs/http-api.md, "Learned rules"): `remember`
 * on an answer, `GET /v1/rules`, `DELETE /v1/rules/{id}` and the proposal
 * for a pending interaction (`…/interactions/{iid}/proposed-rule`). The
 * rules file is serve's to keep: it is injected ({@link LearnedRulesApi}),
 * and the proposal is the policy layer's (docs/policy.md, "Learned rules").
 */
import { z } from "zod";
import type { LearnedDecision, LearnedRuleView, PolicyRequest, RequestPlace, RuleProposal, SaveRule } from "../policy/index.js";
import type { AnswerResult, InteractionAction } from "./contract.js";
import type { ServerResponse } from "node:http";
import { HttpProblem, sendJson } from "./http-problem.js";
import { sendAnswer } from "./refusals.js";
import { decidedByOf } from "./request-auth.js";
import type { RouteCall } from "./route-spec.js";
import type { HubSession, InteractionRequested } from "./session-hub.js";

const ScopeSchema = z.enum(["conversation", "workspace", "everywhere"], { error: () => "must be conversation, workspace or everywhere" });

/** `remember` in an answer's body: save a rule learned from this answer. */
export const RememberSchema = z.object({
  scope: ScopeSchema,
  /** The rule as the person edited it (a command pattern or a `{workspace}/…` glob); default the proposal's `match`. */
  rule: z.string().min(1).max(4096).optional(),
});
export const RememberBodySchema = z.object({ remember: RememberSchema.optional() });
export type RememberBody = z.infer<typeof RememberSchema>;

export const LearnedRuleSchema = z.object({
  id: z.string(),
  decision: z.enum(["approve", "deny", "ask"]),
  /** The rule text as the rules file writes it. */
  match: z.string(),
  scope: ScopeSchema,
  kind: z.enum(["command", "file"]),
  addedBy: z.string(),
  addedAt: z.string(),
  fromRequest: z.string(),
  fired: z.number().int().nonnegative(),
  lastFired: z.string().nullable(),
});
export const RulesResponseSchema = z.object({ rules: z.array(LearnedRuleSchema) });
export const RevokedRuleSchema = z.object({ revoked: LearnedRuleSchema });
/** The rule an answer saved, as the answer's response carries it. */
export const SavedRuleSchema = z.object({ id: z.string(), decision: z.enum(["approve", "deny"]), match: z.string(), scope: ScopeSchema });
export const ProposedRuleSchema = z.object({
  /** Present when the query named one (`?decision=approve|deny`). */
  decision: z.enum(["approve", "deny"]).optional(),
  match: z.string(),
  scope: ScopeSchema,
  kind: z.enum(["command", "file"]),
  /** A file rule's operation, when the request names one. */
  operation: z.enum(["create", "edit", "read"]).optional(),
  /** Wider rules a person may pick instead, narrowest first. */
  alternatives: z.array(z.string()),
});

/** What serve keeps learned rules with (the CLI's store satisfies it). */
export interface LearnedRulesApi {
  list(): LearnedRuleView[];
  save(input: SaveRule): Promise<LearnedRuleView>;
  revoke(id: string, by: string): Promise<LearnedRuleView | undefined>;
}

function noRules(): HttpProblem {
  return new HttpProblem(
    404,
    "Not Found",
    "this server keeps no learned rules: learned rules apply where a policy does, so start serve with --policy FILE to remember answers",
  );
}

/** The rules API, or a 404 when serve keeps none. */
export function rulesOf(rules: LearnedRulesApi | undefined): LearnedRulesApi {
  if (rules === undefined) throw noRules();
  return rules;
}

/** The proposal for `waiting` (422 with a sentence when no rule can cover it). */
export async function proposalFor(
  waiting: InteractionRequested | undefined,
  interactionId: string,
  place: RequestPlace,
  choice: { decision?: LearnedDecision; scope?: RememberBody["scope"]; rule?: string },
): Promise<{ proposal: RuleProposal; request: PolicyRequest }> {
  if (waiting === undefined) {
    throw new HttpProblem(404, "Not Found", `interaction ${interactionId} is not pending, so there is no request to learn a rule from`, "not_found");
  }
  const { editedRule, policyRequestOf, proposeRule } = await import("../policy/index.js");
  const request = policyRequestOf(waiting.request, waiting.stepType);
  const proposed = proposeRule(request, place, {
    ...(choice.decision === undefined ? {} : { decision: choice.decision }),
    ...(choice.scope === undefined ? {} : { scope: choice.scope }),
  });
  return { proposal: choice.rule === undefined ? proposed : editedRule(proposed, choice.rule, request, place), request };
}

/** The decision an answer with `remember` saves: approve or deny (an answer to a question is not remembered). */
export function rememberedDecision(action: InteractionAction): LearnedDecision {
  if (action.action === "answer") {
    throw new HttpProblem(
      422,
      "Unprocessable Content",
      "an answer to a question cannot be remembered as a rule; remember an approve or a deny of a permission",
      "invalid_argument",
    );
  }
  return action.action;
}

/** `?decision=` and `?scope=` of a proposed-rule request, checked. */
export function proposalQuery(query: URLSearchParams): { decision?: LearnedDecision; scope?: RememberBody["scope"] } {
  const decision = query.get("decision");
  const scope = query.get("scope");
  if (decision !== null && decision !== "approve" && decision !== "deny") throw new HttpProblem(400, "Bad Request", "decision: must be approve or deny");
  if (scope !== null && scope !== "conversation" && scope !== "workspace" && scope !== "everywhere") {
    throw new HttpProblem(400, "Bad Request", "scope: must be conversation, workspace or everywhere");
  }
  return { ...(decision === null ? {} : { decision }), ...(scope === null ? {} : { scope }) };
}

/** The answer's response with the rule it saved. */
export function withRule(result: AnswerResult, saved: LearnedRuleView): AnswerResult & { rule: z.infer<typeof SavedRuleSchema> } {
  return { ...result, rule: { id: saved.id, decision: saved.decision === "approve" ? "approve" : "deny", match: saved.match, scope: saved.scope } };
}

export function auditRequestOf(request: PolicyRequest): { commandLine?: string; path?: string } {
  return request.kind === "command" ? { commandLine: request.commandLine } : request.kind === "file" ? { path: request.path } : {};
}

/** `GET /v1/rules` (a route that `requires` {@link rulesOf}). */
export function listRules(call: RouteCall<undefined>): void {
  sendJson(call.res, 200, { rules: rulesOf(call.context.options.rules).list() });
}

/** `DELETE /v1/rules/{ruleId}`: revoked by whoever asked (`decidedBy`). */
export async function revokeRule(call: RouteCall<undefined>): Promise<void> {
  const id = call.params.ruleId!;
  const revoked = await rulesOf(call.context.options.rules).revoke(id, decidedByOf(call.principal, call.req));
  if (revoked === undefined) throw new HttpProblem(404, "Not Found", `no learned rule has the id ${id}; GET /v1/rules lists them`, "not_found");
  sendJson(call.res, 200, { revoked });
}

/** An answer with `remember`: the rule is proposed (and checked) first, saved once the answer was delivered. */
export async function answerRemembering(
  res: ServerResponse,
  session: HubSession,
  waiting: InteractionRequested | undefined,
  answer: { interactionId: string; action: InteractionAction; remember: RememberBody; decidedBy: string; place: RequestPlace },
  given: LearnedRulesApi | undefined,
): Promise<void> {
  const rules = rulesOf(given);
  const decision = rememberedDecision(answer.action);
  const choice = { decision, scope: answer.remember.scope, ...(answer.remember.rule === undefined ? {} : { rule: answer.remember.rule }) };
  const { proposal, request } = await proposalFor(waiting, answer.interactionId, answer.place, choice);
  const result = await session.respond(answer.interactionId, answer.action, answer.decidedBy);
  if (result.result !== "delivered") return sendAnswer(res, result, { interactionId: answer.interactionId, conversationId: session.conversationId });
  const saved = await rules.save({
    decision,
    proposal,
    place: answer.place,
    addedBy: answer.decidedBy,
    fromRequest: answer.interactionId,
    request: auditRequestOf(request),
  });
  return sendJson(res, 200, withRule(result, saved));
}
