/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod contract
 * (`contract.ts`). `docs/openapi.json` is this document, committed; a test
 * fails when the two differ.
 */
import { z } from "zod";
import {
  AnswerResultSchema,
  DeliveredSchema,
  InteractionActionSchema,
  InterruptResultSchema,
  MapperEventSchema,
  PairingCodeSchema,
  PairingRequestSchema,
  PairingResultSchema,
  PendingResponseSchema,
  PushKeySchema,
  PushSubscribedSchema,
  PushSubscriptionSchema,
  ProblemSchema,
  PushUnsubscribedSchema,
  PushUnsubscribeSchema,
  SessionsResponseSchema,
  TurnRequestSchema,
  TurnResultSchema,
} from "./contract.js";
import { ResyncSchema } from "./event-stream.js";
import { ProposedRuleSchema, RememberBodySchema, RevokedRuleSchema, RulesResponseSchema, SavedRuleSchema } from "./rules-routes.js";

const schema = (s: z.ZodType, io: "input" | "output" = "output"): unknown => {
  const out = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out["$schema"];
  return out;
};

const json = (s: z.ZodType, io: "input" | "output" = "output") => ({ "application/json": { schema: schema(s, io) } });
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });
const conversationId = { name: "conversationId", in: "path", required: true, schema: { type: "string" } };

/** What any route, the page included, can answer before it is routed. */
const anyRoute = {
  "400": problem("No Host header, or a path that is not valid percent-encoding"),
  "403": problem("A Host this server does not answer to (see --allow-host), or an Origin that is neither this server's nor the --cors one"),
  "500": problem("A bug in agy-bridge"),
  "503": problem("The server is shutting down"),
};
/** …and every /v1 route, after that. */
const v1Route = {
  ...anyRoute,
  "401": problem("No or wrong bearer token"),
  "429": problem("Too many failed authentications from this address (see Retry-After)"),
};
const unknownConversation = problem("Unknown conversation");
const badGateway = problem("The session could not reach agy (`detail` says why)");
const tooLarge = problem("A body over 2 MiB");

/** The responses of a /v1 operation: the shared ones, with the operation's own (listed) on top. */
const responses = (own: Record<string, unknown>) => ({ ...v1Route, ...own });

export const EVENT_ID_DESCRIPTION =
  "Each message has `id:` `<epoch>-<seq>` (e.g. `mfz3k1q07f3a-41`: the epoch names this run of serve, seq increases strictly per conversation), `event:` (the event type) and `data:` (the event JSON, see components.schemas.Event). Send `Last-Event-ID` to resume after that id. An id of an earlier run (another epoch, or a bare number) replays everything this run holds, so nothing that arrived during a restart is skipped; an id of this run beyond its newest event is refused with 400. With `serve --redis` (sessions of the fleet), the id is instead the Redis stream entry id of the event in `agy:events:<host>:<conversationId>` (`<ms>-<seq>`, e.g. `1733050000000-0`), the same in every run of serve: resuming with one, to this serve or to a restarted one, gives exactly the entries after it (a serve that has not read that far yet keeps the stream open until it has); an id beyond the stream's newest entry is refused with 400; `history_end`, which the stream has no entry for, comes without `id:`, once per connection (after the entries up to the stream's newest when serve began reading, or after the backlog of a client resuming past that point). serve keeps a bounded window of recent events per conversation (--replay-window, default 1000): a position older than the window (or no Last-Event-ID once the window dropped the start) is served by rebuilding from a fresh read of the conversation, announced by an `event: resync` message (data: components.schemas.Resync) — never by silently skipping. A comment arrives at least every 15 s.";

const interactionId = { name: "interactionId", in: "path", required: true, schema: { type: "string" } };
const noRules = problem("This server keeps no learned rules");

/** The learned rules routes (docs/http-api.md, "Learned rules"). */
function rulePaths(): Record<string, unknown> {
  return {
    "/v1/rules": {
      get: {
        summary: "The rules learned from answers (the learned rules file the policy includes)",
        responses: responses({ "200": { description: "The learned rules", content: json(RulesResponseSchema) }, "404": noRules }),
      },
    },
    "/v1/rules/{ruleId}": {
      delete: {
        summary: "Revoke a learned rule: it stops matching at serve's next decision",
        parameters: [{ name: "ruleId", in: "path", required: true, schema: { type: "string" } }],
        responses: responses({
          "200": { description: "The rule that was removed", content: json(RevokedRuleSchema) },
          "404": problem("This server keeps no learned rules, or no rule has that id (`result: not_found`)"),
        }),
      },
    },
    "/v1/sessions/{conversationId}/interactions/{interactionId}/proposed-rule": {
      get: {
        summary: "The narrowest rule covering a pending interaction, exactly as `remember` would save it",
        parameters: [
          conversationId,
          interactionId,
          { name: "decision", in: "query", required: false, schema: { type: "string", enum: ["approve", "deny"] } },
          { name: "scope", in: "query", required: false, schema: { type: "string", enum: ["conversation", "workspace", "everywhere"] } },
        ],
        responses: responses({
          "200": { description: "The proposal; `decision` only when the query named one", content: json(ProposedRuleSchema) },
          "400": problem("`decision` or `scope` is not one of its values"),
          "404": problem("Unknown conversation, or the interaction is not pending (`result: not_found`)"),
          "422": problem(
            "No rule can cover this request (`invalid_argument`; `detail` says why: several commands, a substitution, a file outside the workspace, a question…)",
          ),
        }),
      },
    },
  };
}

/** The page's service worker, manifest and icon: public, like the page. */
function assetPaths(): Record<string, unknown> {
  const asset = (summary: string, type: string) => ({
    get: { summary, security: [], responses: { "200": { description: summary, content: { [type]: { schema: { type: "string" } } } }, ...anyRoute } },
  });
  return {
    "/sw.js": asset("The page's service worker (offline shell, push notifications)", "text/javascript"),
    "/manifest.webmanifest": asset("The page's web app manifest", "application/manifest+json"),
    "/icon.svg": asset("The page's icon", "image/svg+xml"),
  };
}

/** Pairing a device: the code exchange (public) and new codes (bearer token only). */
function pairingPaths(): Record<string, unknown> {
  return {
    "/v1/pairing": {
      post: {
        summary: "Exchange a one-time pairing code (from `agy-bridge pair`, or the link serve printed) for a device token",
        security: [],
        requestBody: { required: true, content: json(PairingRequestSchema, "input") },
        responses: {
          ...anyRoute,
          "201": { description: "The device is paired; keep the token (only its hash is stored)", content: json(PairingResultSchema) },
          "400": problem("The body is not JSON or does not match the schema; also a missing Host or bad path"),
          "401": problem("`result: pairing_refused`: the code is unknown, already used or expired"),
          "413": tooLarge,
          "429": problem("Too many refused codes from this address (see Retry-After)"),
        },
      },
    },
    "/v1/pairing/codes": {
      post: {
        summary: "A new one-time pairing link (bearer token only; what `agy-bridge pair` calls)",
        responses: responses({
          "201": {
            description: "A code valid for 5 minutes and one device, and the page link carrying it in its fragment",
            content: json(PairingCodeSchema),
          },
          "403": problem("A device token: only the bearer token pairs devices"),
          "404": problem("This server does not pair devices"),
        }),
      },
    },
  };
}

/** The page's Web Push subscription. */
function pushPaths(): Record<string, unknown> {
  return {
    "/v1/push/key": {
      get: {
        summary: "The VAPID public key the page subscribes to Web Push with",
        responses: responses({
          "200": { description: "The key (base64url)", content: json(PushKeySchema) },
          "404": problem("This server sends no push notifications"),
        }),
      },
    },
    "/v1/push/subscriptions": {
      post: {
        summary: "Store this browser's push subscription (PushSubscription.toJSON())",
        requestBody: { required: true, content: json(PushSubscriptionSchema, "input") },
        responses: responses({
          "200": { description: "Already subscribed; its keys were replaced", content: json(PushSubscribedSchema) },
          "201": { description: "Subscribed", content: json(PushSubscribedSchema) },
          "400": problem("The body is not JSON or does not match the schema"),
          "404": problem("This server sends no push notifications"),
          "413": tooLarge,
          "422": problem("An endpoint push cannot use (`invalid_argument`: not https, or plain http to another machine)"),
        }),
      },
      delete: {
        summary: "Forget the push subscription with this endpoint",
        requestBody: { required: true, content: json(PushUnsubscribeSchema, "input") },
        responses: responses({
          "200": { description: "`removed` is false when no subscription had that endpoint", content: json(PushUnsubscribedSchema) },
          "400": problem("The body is not JSON or does not match the schema"),
          "404": problem("This server sends no push notifications"),
        }),
      },
    },
  };
}

/** Listing sessions and following one: its events and its pending interactions. */
function sessionReadPaths(): Record<string, unknown> {
  return {
    "/v1/sessions": {
      get: {
        summary: "Every supervised conversation on this machine",
        responses: responses({ "200": { description: "The sessions", content: json(SessionsResponseSchema) } }),
      },
    },
    "/v1/sessions/{conversationId}/events": {
      get: {
        summary: "The conversation's events: first everything so far, oldest first, then live (Server-Sent Events)",
        description: EVENT_ID_DESCRIPTION,
        parameters: [
          conversationId,
          { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string", pattern: "^([a-z0-9]{1,32}-)?[0-9]{1,20}$" } },
        ],
        responses: responses({
          "200": { description: "An event stream", content: { "text/event-stream": { schema: { type: "string" } } } },
          "400": problem(
            "Last-Event-ID is not an id, or is an id of this run beyond its newest event (never sent), or (serve --redis) a stream entry id beyond the stream's newest entry; also a missing Host or bad path",
          ),
          "404": unknownConversation,
        }),
      },
    },
    "/v1/sessions/{conversationId}/pending": {
      get: {
        summary: "The open interaction_requested events of the conversation",
        parameters: [conversationId],
        responses: responses({ "200": { description: "Pending approvals and questions", content: json(PendingResponseSchema) }, "404": unknownConversation }),
      },
    },
  };
}

/** Answering a pending interaction. */
function answerPaths(): Record<string, unknown> {
  return {
    "/v1/sessions/{conversationId}/interactions/{interactionId}": {
      post: {
        summary: "Approve, deny or answer a pending interaction (and, with `remember`, save a rule learned from the answer)",
        parameters: [conversationId, interactionId],
        requestBody: { required: true, content: json(z.intersection(InteractionActionSchema, RememberBodySchema), "input") },
        responses: responses({
          "200": {
            description: "Delivered to the waiting step; with `remember`, `rule` is the rule saved",
            content: json(DeliveredSchema.extend({ rule: SavedRuleSchema.optional() })),
          },
          "400": problem("The body is not JSON or does not match the schema (`detail` names the field)"),
          "404": problem("Unknown conversation, or unknown interaction (`result: not_found`); with `remember`, also a server that keeps no learned rules"),
          "409": problem("`result` is `already_resolved`, `timed_out` or `decided_by_policy` (serve's policy answers the request itself)"),
          "413": tooLarge,
          "422": problem(
            "The action does not fit the interaction: `wrong_action` (answer on a permission, approve on a question — `detail` names the right body), `not_answerable` (a gate only the agy TUI can answer), `invalid_argument` (a scope, instruction or option it does not take; with `remember`, a request no rule can cover or a `rule` that does not cover it — nothing is sent then)",
          ),
          "502": badGateway,
        }),
      },
    },
  };
}

/** Acting on a session: typing a turn into agy's TUI, interrupting. */
function sessionActionPaths(): Record<string, unknown> {
  return {
    "/v1/sessions/{conversationId}/turns": {
      post: {
        summary: "Type a user turn into the agy TUI",
        parameters: [conversationId],
        requestBody: { required: true, content: json(TurnRequestSchema, "input") },
        responses: responses({
          "200": { description: "The delivery result: delivered, unverified or failed, with the reason", content: json(TurnResultSchema) },
          "400": problem("The body is not JSON or does not match the schema"),
          "404": unknownConversation,
          "409": problem(
            "Not typed: `interaction_pending` (a step waits for an answer; `interactionId` names it) or `no_pane` (serve knows no tmux pane of this agy; `detail` says what to do)",
          ),
          "413": tooLarge,
          "422": problem("The session cannot take this turn as asked (`invalid_argument`; `detail` says why)"),
          "502": badGateway,
        }),
      },
    },
    "/v1/sessions/{conversationId}/interrupt": {
      post: {
        summary: "Interrupt the turn in progress (cancel while running, deny while waiting)",
        parameters: [conversationId],
        responses: responses({
          "200": { description: "What was done", content: json(InterruptResultSchema) },
          "404": unknownConversation,
          "422": problem("A waiting gate that cannot be denied over RPC (`invalid_argument`)"),
          "502": badGateway,
        }),
      },
    },
  };
}

/** The buttons of notifications: one-time action tokens. */
function actionTokenPaths(): Record<string, unknown> {
  return {
    "/v1/actions": {
      post: {
        summary: "Answer one interaction with the one action a one-time action token was minted for (ntfy's buttons; no body)",
        description:
          "Authorization: Bearer <action token>, not the API token. A token works once, and not after its interaction was resolved or after 24 hours.",
        security: [{ actionToken: [] }],
        responses: {
          ...anyRoute,
          "200": { description: "Delivered to the waiting step", content: json(AnswerResultSchema) },
          "401": problem("An unknown, used or expired action token"),
          "404": problem("The conversation or the interaction is gone (`result: not_found`)"),
          "409": problem("`result` is `already_resolved`, `timed_out` or `decided_by_policy` (serve's policy answers the request itself)"),
          "429": problem("Too many failed tokens from this address (see Retry-After)"),
          "502": badGateway,
        },
      },
    },
  };
}

export function buildOpenApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "agy-bridge HTTP API",
      version,
      description:
        "Supervise attended agy sessions over HTTP: list sessions, follow events (SSE), answer approvals and questions, type turns, interrupt. Every /v1 route but POST /v1/pairing requires Authorization: Bearer <token>: the bearer token, or a paired device's token (from POST /v1/pairing), which works everywhere but POST /v1/pairing/codes. Every route, the page included, requires a Host that names this server (loopback, the listen address, or --allow-host) and refuses a foreign Origin. Errors are RFC 9457 problem details; `result` names the kind of refusal.",
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        actionToken: { type: "http", scheme: "bearer", description: "A one-time action token from a notification (POST /v1/actions only)" },
      },
      schemas: { Problem: schema(ProblemSchema), Event: schema(MapperEventSchema), Resync: schema(ResyncSchema) },
    },
    paths: {
      "/": {
        get: {
          summary: "The approval page (HTML; the token is pasted into it, never in the URL)",
          security: [],
          responses: { "200": { description: "The page", content: { "text/html": { schema: { type: "string" } } } }, ...anyRoute },
        },
      },
      ...assetPaths(),
      ...pairingPaths(),
      ...pushPaths(),
      ...sessionReadPaths(),
      ...answerPaths(),
      ...rulePaths(),
      ...sessionActionPaths(),
      ...actionTokenPaths(),
      "/v1/openapi.json": {
        get: { summary: "This document", responses: responses({ "200": { description: "OpenAPI 3.1" } }) },
      },
    },
  };
}
