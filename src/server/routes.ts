/**
 * Every route of the HTTP API, as data: the dispatcher (`route-dispatch.ts`)
 * answers from this table and the OpenAPI document (`openapi.ts`,
 * docs/openapi.json) is generated from it, so a route, a body or a status
 * exists in both or in neither. Order matters only for the document.
 */
import {
  AnswerResultSchema,
  DeliveredSchema,
  InterruptResultSchema,
  PairingCodeSchema,
  PairingRequestSchema,
  PairingResultSchema,
  PendingResponseSchema,
  PushKeySchema,
  PushSubscribedSchema,
  PushSubscriptionSchema,
  PushUnsubscribedSchema,
  PushUnsubscribeSchema,
  SessionsResponseSchema,
  TurnRequestSchema,
  TurnResultSchema,
} from "./contract.js";
import { openEvents } from "./event-route.js";
import { sendJson } from "./http-problem.js";
import { PAGE_ASSETS } from "./page-assets.js";
import { sendAsset, sendPage } from "./page-routes.js";
import { pushOf, sendPushKey, subscribe, unsubscribe } from "./push-routes.js";
import { defineRoute, type Route } from "./route-spec.js";
import { listRules, ProposedRuleSchema, RevokedRuleSchema, RulesResponseSchema, revokeRule, rulesOf, SavedRuleSchema } from "./rules-routes.js";
import {
  answerByActionToken,
  answerInteraction,
  type AnswerBody,
  AnswerBodySchema,
  interruptTurn,
  listSessions,
  proposeRuleFor,
  sessionOf,
  typeTurn,
} from "./session-routes.js";

export const EVENT_ID_DESCRIPTION =
  "Each message has `id:` `<epoch>-<seq>` (e.g. `mfz3k1q07f3a-41`: the epoch names this run of serve, seq increases strictly per conversation), `event:` (the event type) and `data:` (the event JSON, see components.schemas.Event). Send `Last-Event-ID` to resume after that id. An id of an earlier run (another epoch, or a bare number) replays everything this run holds, so nothing that arrived during a restart is skipped; an id of this run beyond its newest event is refused with 400. With `serve --redis` (sessions of the fleet), the id is instead the Redis stream entry id of the event in `agy:events:<host>:<conversationId>` (`<ms>-<seq>`, e.g. `1733050000000-0`), the same in every run of serve: resuming with one, to this serve or to a restarted one, gives exactly the entries after it (a serve that has not read that far yet keeps the stream open until it has); an id beyond the stream's newest entry is refused with 400; `history_end`, which the stream has no entry for, comes without `id:`, once per connection (after the entries up to the stream's newest when serve began reading, or after the backlog of a client resuming past that point). serve keeps a bounded window of recent events per conversation (--replay-window, default 1000): a position older than the window (or no Last-Event-ID once the window dropped the start) is served by rebuilding from a fresh read of the conversation, announced by an `event: resync` message (data: components.schemas.Resync) — never by silently skipping. A comment arrives at least every 15 s.";

const UNKNOWN_CONVERSATION = "Unknown conversation";
const BAD_GATEWAY = "The session could not reach agy (`detail` says why)";
const TOO_LARGE = "A body over 2 MiB";
const NOT_JSON = "The body is not JSON or does not match the schema";
const NO_PUSH = "This server sends no push notifications";
const NOT_DELIVERED = "`result` is `already_resolved`, `timed_out` or `decided_by_policy` (serve's policy answers the request itself)";

/** The page's service worker, manifest and icon: public, like the page. */
function assetRoute(name: keyof typeof PAGE_ASSETS & string, summary: string): Route {
  const asset = PAGE_ASSETS[name]!;
  return defineRoute({
    method: "GET",
    path: `/${name}`,
    auth: "public",
    summary,
    statuses: { 200: { description: summary, contentType: asset.type.replace(/;.*$/, "") } },
    handle: ({ res }) => sendAsset(res, asset),
  });
}

const pageRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/",
    alsoAt: ["/index.html"],
    auth: "public",
    summary: "The approval page (HTML; the token is pasted into it, never in the URL)",
    statuses: { 200: { description: "The page", contentType: "text/html" } },
    handle: ({ res, context }) => sendPage(res, context.options.page),
  }),
  assetRoute("sw.js", "The page's service worker (offline shell, push notifications)"),
  assetRoute("manifest.webmanifest", "The page's web app manifest"),
  assetRoute("icon.svg", "The page's icon"),
];

/** Pairing a device: the code exchange (public) and new codes (bearer token only). */
const pairingRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/pairing",
    auth: "public",
    summary: "Exchange a one-time pairing code (from `agy-bridge pair`, or the link serve printed) for a device token",
    body: PairingRequestSchema,
    statuses: {
      201: { description: "The device is paired; keep the token (only its hash is stored)", schema: PairingResultSchema },
      400: "The body is not JSON or does not match the schema; also a missing Host or bad path",
      401: "`result: pairing_refused`: the code is unknown, already used or expired",
      413: TOO_LARGE,
      429: "Too many refused codes from this address (see Retry-After)",
    },
    handle: ({ context, req, res, body }) => context.pairingRoutes.exchange(req, res, body),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/pairing/codes",
    auth: "bearer",
    summary: "A new one-time pairing link (bearer token only; what `agy-bridge pair` calls)",
    statuses: {
      201: { description: "A code valid for 5 minutes and one device, and the page link carrying it in its fragment", schema: PairingCodeSchema },
      403: "A device token: only the bearer token pairs devices",
      404: "This server does not pair devices",
    },
    handle: ({ context, req, res, principal }) => context.pairingRoutes.issue(req, res, principal),
  }),
];

/** The page's Web Push subscription. */
const pushRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/push/key",
    auth: "bearer",
    summary: "The VAPID public key the page subscribes to Web Push with",
    statuses: { 200: { description: "The key (base64url)", schema: PushKeySchema }, 404: NO_PUSH },
    requires: pushOf,
    handle: sendPushKey,
  }),
  defineRoute({
    method: "POST",
    path: "/v1/push/subscriptions",
    auth: "bearer",
    summary: "Store this browser's push subscription (PushSubscription.toJSON())",
    body: PushSubscriptionSchema,
    statuses: {
      200: { description: "Already subscribed; its keys were replaced", schema: PushSubscribedSchema },
      201: { description: "Subscribed", schema: PushSubscribedSchema },
      400: NOT_JSON,
      404: NO_PUSH,
      413: TOO_LARGE,
      422: "An endpoint push cannot use (`invalid_argument`: not https, or plain http to another machine)",
    },
    requires: pushOf,
    handle: subscribe,
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/push/subscriptions",
    auth: "bearer",
    summary: "Forget the push subscription with this endpoint",
    body: PushUnsubscribeSchema,
    statuses: {
      200: { description: "`removed` is false when no subscription had that endpoint", schema: PushUnsubscribedSchema },
      400: NOT_JSON,
      404: NO_PUSH,
    },
    enabled: (options) => options.push?.unsubscribe !== undefined,
    handle: unsubscribe,
  }),
];

const conversationId = "{conversationId}";
const sessionPath = `/v1/sessions/${conversationId}`;
const interactionPath = `${sessionPath}/interactions/{interactionId}`;

/** Listing sessions and following one: its events and its pending interactions. */
const sessionReadRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/sessions",
    auth: "bearer",
    summary: "Every supervised conversation on this machine",
    statuses: { 200: { description: "The sessions", schema: SessionsResponseSchema } },
    handle: listSessions,
  }),
  defineRoute({
    method: "GET",
    path: `${sessionPath}/events`,
    auth: "bearer",
    summary: "The conversation's events: first everything so far, oldest first, then live (Server-Sent Events)",
    description: EVENT_ID_DESCRIPTION,
    parameters: [{ name: "Last-Event-ID", in: "header", required: false, schema: { type: "string", pattern: "^([a-z0-9]{1,32}-)?[0-9]{1,20}$" } }],
    statuses: {
      200: { description: "An event stream", contentType: "text/event-stream" },
      400: "Last-Event-ID is not an id, or is an id of this run beyond its newest event (never sent), or (serve --redis) a stream entry id beyond the stream's newest entry; also a missing Host or bad path",
      404: UNKNOWN_CONVERSATION,
    },
    handle: ({ context, req, res, params, principal }) => openEvents(context, req, res, params.conversationId!, principal),
  }),
  defineRoute({
    method: "GET",
    path: `${sessionPath}/pending`,
    auth: "bearer",
    summary: "The open interaction_requested events of the conversation",
    statuses: { 200: { description: "Pending approvals and questions", schema: PendingResponseSchema }, 404: UNKNOWN_CONVERSATION },
    handle: (call) => sendJson(call.res, 200, { pending: sessionOf(call).pending() }),
  }),
];

/** Answering a pending interaction. */
const answerRoutes: Route[] = [
  defineRoute<AnswerBody>({
    method: "POST",
    path: interactionPath,
    auth: "bearer",
    summary: "Approve, deny or answer a pending interaction (and, with `remember`, save a rule learned from the answer)",
    body: AnswerBodySchema,
    statuses: {
      200: {
        description: "Delivered to the waiting step; with `remember`, `rule` is the rule saved",
        schema: DeliveredSchema.extend({ rule: SavedRuleSchema.optional() }),
      },
      400: "The body is not JSON or does not match the schema (`detail` names the field)",
      404: "Unknown conversation, or unknown interaction (`result: not_found`); with `remember`, also a server that keeps no learned rules",
      409: NOT_DELIVERED,
      413: TOO_LARGE,
      422: "The action does not fit the interaction: `wrong_action` (answer on a permission, approve on a question — `detail` names the right body), `not_answerable` (a gate only the agy TUI can answer), `invalid_argument` (a scope, instruction or option it does not take; with `remember`, a request no rule can cover or a `rule` that does not cover it — nothing is sent then)",
      502: BAD_GATEWAY,
    },
    handle: answerInteraction,
  }),
];

/** The learned rules routes (docs/http-api.md, "Learned rules"). */
const ruleRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/rules",
    auth: "bearer",
    summary: "The rules learned from answers (the learned rules file the policy includes)",
    statuses: { 200: { description: "The learned rules", schema: RulesResponseSchema }, 404: "This server keeps no learned rules" },
    requires: (options) => rulesOf(options.rules),
    pathRequires: true,
    handle: listRules,
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/rules/{ruleId}",
    auth: "bearer",
    summary: "Revoke a learned rule: it stops matching at serve's next decision",
    statuses: {
      200: { description: "The rule that was removed", schema: RevokedRuleSchema },
      404: "This server keeps no learned rules, or no rule has that id (`result: not_found`)",
    },
    requires: (options) => rulesOf(options.rules),
    pathRequires: true,
    handle: revokeRule,
  }),
  defineRoute({
    method: "GET",
    path: `${interactionPath}/proposed-rule`,
    auth: "bearer",
    summary: "The narrowest rule covering a pending interaction, exactly as `remember` would save it",
    parameters: [
      { name: "decision", in: "query", required: false, schema: { type: "string", enum: ["approve", "deny"] } },
      { name: "scope", in: "query", required: false, schema: { type: "string", enum: ["conversation", "workspace", "everywhere"] } },
    ],
    statuses: {
      200: { description: "The proposal; `decision` only when the query named one", schema: ProposedRuleSchema },
      400: "`decision` or `scope` is not one of its values",
      404: "Unknown conversation, or the interaction is not pending (`result: not_found`)",
      422: "No rule can cover this request (`invalid_argument`; `detail` says why: several commands, a substitution, a file outside the workspace, a question…)",
    },
    // No rule can be saved without the rules file, so none is proposed.
    requires: (options) => rulesOf(options.rules),
    handle: proposeRuleFor,
  }),
];

/** Acting on a session: typing a turn into agy's TUI, interrupting. */
const sessionActionRoutes: Route[] = [
  defineRoute<{ text: string }>({
    method: "POST",
    path: `${sessionPath}/turns`,
    auth: "bearer",
    summary: "Type a user turn into the agy TUI",
    body: TurnRequestSchema,
    statuses: {
      200: { description: "The delivery result: delivered, unverified or failed, with the reason", schema: TurnResultSchema },
      400: NOT_JSON,
      404: UNKNOWN_CONVERSATION,
      409: "Not typed: `interaction_pending` (a step waits for an answer; `interactionId` names it) or `no_pane` (serve knows no tmux pane of this agy; `detail` says what to do)",
      413: TOO_LARGE,
      422: "The session cannot take this turn as asked (`invalid_argument`; `detail` says why)",
      502: BAD_GATEWAY,
    },
    handle: typeTurn,
  }),
  defineRoute({
    method: "POST",
    path: `${sessionPath}/interrupt`,
    auth: "bearer",
    summary: "Interrupt the turn in progress (cancel while running, deny while waiting)",
    statuses: {
      200: { description: "What was done", schema: InterruptResultSchema },
      404: UNKNOWN_CONVERSATION,
      422: "A waiting gate that cannot be denied over RPC (`invalid_argument`)",
      502: BAD_GATEWAY,
    },
    handle: interruptTurn,
  }),
];

/** The buttons of notifications: one-time action tokens. */
const actionTokenRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/actions",
    auth: "action-token",
    summary: "Answer one interaction with the one action a one-time action token was minted for (ntfy's buttons; no body)",
    description: "Authorization: Bearer <action token>, not the API token. A token works once, and not after its interaction was resolved or after 24 hours.",
    statuses: {
      200: { description: "Delivered to the waiting step", schema: AnswerResultSchema },
      401: "An unknown, used or expired action token",
      404: "The conversation or the interaction is gone (`result: not_found`)",
      409: NOT_DELIVERED,
      429: "Too many failed tokens from this address (see Retry-After)",
      502: BAD_GATEWAY,
    },
    enabled: (options) => options.actions !== undefined,
    handle: answerByActionToken,
  }),
];

const documentRoute = defineRoute({
  method: "GET",
  path: "/v1/openapi.json",
  auth: "bearer",
  summary: "This document",
  statuses: { 200: { description: "OpenAPI 3.1" } },
  handle: ({ res, context }) => sendJson(res, 200, context.options.openapi),
});

/** The table, in the order the OpenAPI document lists it. */
export const ROUTES: readonly Route[] = [
  ...pageRoutes,
  ...pairingRoutes,
  ...pushRoutes,
  ...sessionReadRoutes,
  ...answerRoutes,
  ...ruleRoutes,
  ...sessionActionRoutes,
  ...actionTokenRoutes,
  documentRoute,
];
