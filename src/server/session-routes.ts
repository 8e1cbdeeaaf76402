/**
 * The handlers of the session routes (`routes.ts` lists them with their
 * statuses): listing sessions, reading what waits, answering it (also through
 * a notification's one-time button), typing a turn and interrupting.
 */
import type { ApiContext, ApiServerOptions } from "./api-options.js";
import { z } from "zod";
import { InteractionActionSchema } from "./contract.js";
import { HttpProblem, sendJson } from "./http-problem.js";
import { refuseWrongAction, sendAnswer, sendTurnOutcome } from "./refusals.js";
import { decidedByOf, redeemActionToken } from "./request-auth.js";
import type { RouteCall } from "./route-spec.js";
import { answerRemembering, proposalFor, proposalQuery, RememberBodySchema } from "./rules-routes.js";
import type { HubSession } from "./session-hub.js";

/** The longest a request for an unknown session waits for a just-started serve's first refresh. */
const FIRST_REFRESH_WAIT_MS = 30_000;

/** The body of `POST …/interactions/{interactionId}`: the action, and what to remember of it. */
export const AnswerBodySchema = z.intersection(InteractionActionSchema, RememberBodySchema);
export type AnswerBody = z.infer<typeof AnswerBodySchema>;

/**
 * The session `{conversationId}` names, else a 404. While a just-started
 * serve's first refresh is still attaching sessions, waits for it (at most
 * {@link FIRST_REFRESH_WAIT_MS}), so a client reconnecting right after a
 * restart (an `EventSource` stops for good on a 404) is not told its session
 * does not exist.
 */
export async function sessionNamed(context: ApiContext, id: string): Promise<HubSession> {
  const { hub } = context.options;
  let known = hub.get(id);
  if (known === undefined) {
    await hub.firstRefresh(FIRST_REFRESH_WAIT_MS);
    known = hub.get(id);
  }
  if (known === undefined) throw new HttpProblem(404, "Not Found", `no supervised session has conversation ${id}; GET /v1/sessions lists them`);
  return known;
}

/** The session a route under `{conversationId}` was called with (resolved by the dispatcher). */
export function sessionOf(call: RouteCall<unknown>): HubSession {
  if (call.session === undefined) throw new Error(`route ${call.url.pathname} has no {conversationId}`);
  return call.session;
}

/** `GET /v1/sessions`. */
export function listSessions(call: RouteCall<undefined>): void {
  const { options } = call.context;
  const sessions = options.hub.list().map((s) => ({ ...s.summary(), ...options.describe?.(s.conversationId) }));
  // A stable order, so "the first session" means the same one between calls.
  sessions.sort((a, b) => (a.pid ?? 0) - (b.pid ?? 0) || a.conversationId.localeCompare(b.conversationId));
  sendJson(call.res, 200, { sessions });
}

/** `GET …/interactions/{interactionId}/proposed-rule`. */
export async function proposeRuleFor(call: RouteCall<undefined>): Promise<void> {
  const session = sessionOf(call);
  const interactionId = call.params.interactionId!;
  const choice = proposalQuery(call.url.searchParams);
  const waiting = session.pending().find((p) => p.interactionId === interactionId);
  const place = placeOf(call.context.options, call.params.conversationId!);
  sendJson(call.res, 200, (await proposalFor(waiting, interactionId, place, choice)).proposal);
}

/** `POST …/interactions/{interactionId}`: the action must fit what waits; with `remember`, the rule is saved once delivered. */
export async function answerInteraction(call: RouteCall<AnswerBody>): Promise<void> {
  const session = sessionOf(call);
  const interactionId = call.params.interactionId!;
  const { remember, ...action } = call.body;
  const waiting = session.pending().find((p) => p.interactionId === interactionId);
  if (waiting !== undefined) refuseWrongAction(waiting, action, call.params.conversationId!);
  const decidedBy = decidedByOf(call.principal, call.req);
  if (remember !== undefined) {
    const place = placeOf(call.context.options, call.params.conversationId!);
    return answerRemembering(call.res, session, waiting, { interactionId, action, remember, decidedBy, place }, call.context.options.rules);
  }
  sendAnswer(call.res, await session.respond(interactionId, action, decidedBy), { interactionId, conversationId: session.conversationId });
}

/** `POST …/turns`. */
export async function typeTurn(call: RouteCall<{ text: string }>): Promise<void> {
  const session = sessionOf(call);
  sendTurnOutcome(call.res, await session.sendTurn(call.body.text), session);
}

/** `POST …/interrupt`. */
export async function interruptTurn(call: RouteCall<undefined>): Promise<void> {
  sendJson(call.res, 200, await sessionOf(call).interrupt());
}

/** `POST /v1/actions`: a button outside the page; its one-time token names the interaction and the action (no body is read). */
export async function answerByActionToken(call: RouteCall<undefined>): Promise<void> {
  const scope = redeemActionToken(call.context, call.req, call.res);
  const session = call.context.options.hub.get(scope.conversationId);
  if (session === undefined) throw new HttpProblem(404, "Not Found", `no supervised session has conversation ${scope.conversationId} any more`, "not_found");
  sendAnswer(call.res, await session.respond(scope.interactionId, { action: scope.action }, "ntfy"), {
    interactionId: scope.interactionId,
    conversationId: scope.conversationId,
  });
}

/** Where a conversation's requests come from, for the scope of a learned rule. */
function placeOf(options: ApiServerOptions, conversationId: string): { conversationId: string; workspace?: string } {
  const workspace = options.ruleWorkspace !== undefined ? options.ruleWorkspace(conversationId) : options.describe?.(conversationId).workspace;
  return { conversationId, ...(workspace === undefined ? {} : { workspace }) };
}
