/**
 * What one entry of the route table (`routes.ts`) says: the method and path,
 * who may call it, the body it takes, every status it answers with what that
 * status means, and the handler. The dispatcher (`route-dispatch.ts`) and the
 * OpenAPI document (`openapi.ts`) are both read off these entries.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import type { ApiContext, ApiServerOptions } from "./api-options.js";
import type { Principal } from "./pairing-routes.js";
import type { HubSession } from "./session-hub.js";

export type RouteMethod = "GET" | "POST" | "DELETE";

/**
 * Who may call a route: anyone (`public`: the page, its assets, the pairing
 * code exchange), the holder of a one-time action token (`action-token`: the
 * route checks it itself), or the bearer token or a paired device's token.
 */
export type RouteAuth = "public" | "action-token" | "bearer";

/** A success answer: JSON of `schema`, a body of `contentType`, or no declared body. */
export interface AnswerMeaning {
  readonly description: string;
  readonly schema?: z.ZodType;
  readonly contentType?: string;
}

/** A status a route answers: a success, or (a string) a problem detail with this meaning. */
export type StatusMeaning = AnswerMeaning | string;

/** One request, as its route's handler sees it. */
export interface RouteCall<B> {
  readonly context: ApiContext;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  /** The path's `{name}` segments, percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Who sent it; `owner` on routes that take no bearer token. */
  readonly principal: Principal;
  /** The session `{conversationId}` names; undefined on routes without one. */
  readonly session: HubSession | undefined;
  /** The body, checked against the route's `body` schema (undefined when it takes none). */
  readonly body: B;
}

export interface Route<B = unknown> {
  readonly method: RouteMethod;
  /** `/v1/sessions/{conversationId}/pending`: literal segments and `{name}` parameters. */
  readonly path: string;
  /** More paths answering the same (`/index.html`); not in the OpenAPI document. */
  readonly alsoAt?: readonly string[];
  readonly auth: RouteAuth;
  readonly summary: string;
  readonly description?: string;
  /** Documented parameters besides the path's (query strings, headers), as OpenAPI parameter objects. */
  readonly parameters?: readonly Record<string, unknown>[];
  /** The JSON body the route takes (2 MiB at most): 400 when it is not JSON or does not fit. */
  readonly body?: z.ZodType<B>;
  /** Every status the route itself answers, besides those every route of its `auth` can (`SHARED_STATUSES`). */
  readonly statuses: Readonly<Record<number, StatusMeaning>>;
  /** False when this server was built without what the route needs: it does not exist then. */
  readonly enabled?: (options: ApiServerOptions) => boolean;
  /** Throws (a 404 saying what is missing) when the server lacks what the route needs; checked before the body is read. */
  readonly requires?: (options: ApiServerOptions) => void;
  /** The whole path is missing when `requires` fails: 404 whatever the method, before a 405 (the learned rules' paths). */
  readonly pathRequires?: boolean;
  readonly handle: (call: RouteCall<B>) => Promise<void> | void;
}

/** A route whose handler's body is typed by its schema. */
export function defineRoute<B = undefined>(route: Route<B>): Route {
  return route as Route;
}

/** What any route, the page included, can answer before it is routed. */
export const BEFORE_ROUTING: Readonly<Record<number, string>> = {
  400: "No Host header, or a path that is not valid percent-encoding",
  403: "A Host this server does not answer to (see --allow-host), or an Origin that is neither this server's nor the --cors one",
  500: "A bug in agy-bridge",
  503: "The server is shutting down",
};

/** …and every route that takes the bearer token, after that. */
export const BEARER_STATUSES: Readonly<Record<number, string>> = {
  ...BEFORE_ROUTING,
  401: "No or wrong bearer token",
  429: "Too many failed authentications from this address (see Retry-After)",
};

/** Every status a route can answer: those of every route like it, and its own. */
export function statusesOf(route: Route): Readonly<Record<number, StatusMeaning>> {
  return { ...(route.auth === "bearer" ? BEARER_STATUSES : BEFORE_ROUTING), ...route.statuses };
}

/** The template's segments: a literal, or `{name}` as `{ param: name }`. */
export function segmentsOf(path: string): Array<string | { param: string }> {
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => (s.startsWith("{") && s.endsWith("}") ? { param: s.slice(1, -1) } : s));
}
