/**
 * Answers a request from the route table (`routes.ts`). In order: a route
 * anyone may call is matched first; any other path outside `/v1` is a 404;
 * inside `/v1` the bearer token (or a device's) is checked before anything
 * else is said about the path. Then the path's `{conversationId}` is resolved
 * to its session (404 when none, even for a method or a sub-path that does
 * not exist, as a client's typo there most likely names the session), the
 * method is matched (405; 404 first on a path that `pathRequires` what this
 * server lacks), what the route `requires` is checked (404), the
 * body is read and checked against the route's schema (413, 400), and the
 * handler answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiContext } from "./api-options.js";
import { HttpProblem, methodNotAllowed, notFound } from "./http-problem.js";
import type { Principal } from "./pairing-routes.js";
import { authenticate } from "./request-auth.js";
import { parseBody, readJson } from "./request-body.js";
import { type Route, segmentsOf } from "./route-spec.js";
import { sessionNamed } from "./session-routes.js";

/** One request, routed: `path` is the URL's percent-decoded, non-empty segments. */
export type Dispatch = (req: IncomingMessage, res: ServerResponse, url: URL, path: readonly string[]) => Promise<void>;

interface Compiled {
  readonly route: Route;
  readonly templates: ReadonlyArray<ReadonlyArray<string | { param: string }>>;
}

/** The routes on the path, and the parameters it gave them. */
interface PathMatch {
  readonly params: Record<string, string>;
  readonly routes: Compiled[];
}

/** A dispatcher over the routes this server has (those `enabled` for its options). */
export function createDispatch(context: ApiContext, routes: readonly Route[]): Dispatch {
  const compiled = routes
    .filter((route) => route.enabled?.(context.options) ?? true)
    .map((route) => ({ route, templates: [route.path, ...(route.alsoAt ?? [])].map(segmentsOf) }));
  const open = compiled.filter((c) => c.route.auth !== "bearer");
  const guarded = compiled.filter((c) => c.route.auth === "bearer");
  return async (req, res, url, path) => {
    let principal: Principal = "owner";
    let found = matchPath(open, path);
    if (found === undefined) {
      if (path[0] !== "v1") throw new HttpProblem(404, "Not Found", "no such route; the API lives under /v1 (see /v1/openapi.json)");
      principal = await authenticate(context, req, res);
      found = matchPath(guarded, path);
    }
    const params = found?.params ?? leadingParams(guarded, path);
    const session = params.conversationId === undefined ? undefined : await sessionNamed(context, params.conversationId);
    if (found === undefined) throw notFound();
    const route = found.routes.find((c) => c.route.method === (req.method ?? "GET"))?.route;
    if (route === undefined) {
      for (const c of found.routes) if (c.route.pathRequires === true) c.route.requires?.(context.options);
      throw methodNotAllowed();
    }
    route.requires?.(context.options);
    const body = route.body === undefined ? undefined : parseBody(route.body, await readJson(req));
    await route.handle({ context, req, res, url, params, principal, session, body });
  };
}

/** Every route whose path (or other path) is `path`, with the parameters it names; undefined when none is. */
function matchPath(routes: readonly Compiled[], path: readonly string[]): PathMatch | undefined {
  let found: PathMatch | undefined;
  for (const compiled of routes) {
    for (const template of compiled.templates) {
      const params = paramsOf(template, path);
      if (params === undefined) continue;
      if (found === undefined) found = { params, routes: [] };
      found.routes.push(compiled);
      break;
    }
  }
  return found;
}

function paramsOf(template: ReadonlyArray<string | { param: string }>, path: readonly string[]): Record<string, string> | undefined {
  if (template.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of template.entries()) {
    if (typeof segment === "string") {
      if (segment !== path[i]) return undefined;
    } else params[segment.param] = path[i]!;
  }
  return params;
}

/**
 * For a path no route has: the parameters of the longest start it shares with
 * a route's (`/v1/sessions/{conversationId}` of `/v1/sessions/x/typo`), so a
 * session that does not exist is said to be the problem.
 */
function leadingParams(routes: readonly Compiled[], path: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const { templates } of routes) {
    for (const template of templates) {
      for (const [i, segment] of template.entries()) {
        if (i >= path.length || (typeof segment === "string" && segment !== path[i])) break;
        if (typeof segment !== "string") params[segment.param] = path[i]!;
      }
    }
  }
  return params;
}
