/**
 * The HTTP + SSE API for remote approval bots and the approval page
 * (docs/http-api.md). Every route checks `Host` and `Origin` first
 * (`request-origin.ts`); every `/v1` route needs `Authorization: Bearer`;
 * bodies and answers are checked against the zod contract (`contract.ts`);
 * errors are RFC 9457 problem details. Idle sockets are cut by deadlines and
 * shed over a cap (`connection-guard.ts`). Nothing here logs headers or bodies.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createBearerCheck, createFailureLimiter, type FailureLimiter } from "./bearer-token.js";
import { guardConnections, type ConnectionGuard, type ConnectionLimits } from "./connection-guard.js";
import { InteractionActionSchema, PushSubscriptionSchema, PushUnsubscribeSchema, TurnRequestSchema, type PushSubscriptionBody } from "./contract.js";
import type { DeviceStore } from "./device-store.js";
import { followLog, neverIssued, resumeFrom } from "./event-stream.js";
import { HttpProblem, methodNotAllowed, notFound, sendJson, sendProblem, toProblem } from "./http-problem.js";
import { PAGE_ASSETS } from "./page-assets.js";
import type { PairingCodes } from "./pairing-codes.js";
import { createPairingRoutes, decidedByDevice, type Principal } from "./pairing-routes.js";
import { refuseWrongAction, sendAnswer, sendTurnOutcome } from "./refusals.js";
import { answerRemembering, proposalFor, proposalQuery, RememberBodySchema, rulesOf, serveRules, type LearnedRulesApi } from "./rules-routes.js";
import { parseBody, readJson } from "./request-body.js";
import { createOriginCheck } from "./request-origin.js";
import type { HubSession, SessionHub } from "./session-hub.js";
import { createSseStream, type SseStream, type SseTimers } from "./sse-stream.js";

/** The longest a request for an unknown session waits for a just-started serve's first refresh. */
const FIRST_REFRESH_WAIT_MS = 30_000;

export interface ServerTimeouts {
  /** A client must send its whole header block within this (default 10 000 ms). */
  headersMs?: number;
  /** …and its whole request, body included, within this (default 30 000 ms). */
  requestMs?: number;
  /** An idle kept-alive connection is closed after this (default 5 000 ms). */
  keepAliveMs?: number;
  /** How often the two deadlines above are checked (default 1 000 ms). */
  checkIntervalMs?: number;
}

export interface ApiServerOptions {
  hub: SessionHub;
  /** The bearer token clients must present. */
  token: string;
  /** Allow this one origin cross-origin (no CORS headers otherwise). */
  cors?: string;
  /** The address the server listens on: `Host` may name it (besides loopback names). */
  boundHost?: string;
  /** More names `Host` may carry (`--allow-host`). */
  allowHosts?: readonly string[];
  /** The approval page served at `/`. */
  page: string;
  /** Paired devices: their tokens authenticate on every /v1 route but pairing codes. Without it no device can pair. */
  devices?: DeviceStore;
  /** One-time pairing codes (`POST /v1/pairing/codes`, exchanged at `POST /v1/pairing`). */
  pairing?: PairingCodes;
  /** How often a paired device's open event streams check it is still paired (default 5000 ms). */
  revocationCheckMs?: number;
  /** The page's public address for pairing links; default the origin of the request's `Host`. */
  pageUrl?: string;
  /** Web Push for the page: the VAPID public key, and where subscriptions go (`src/notify/`). Without it the push routes answer 404. */
  push?: {
    publicKey: string;
    /** `invalid_argument` (→ 422) for an endpoint push cannot use. `device`: the paired device's id, or `owner` (the bearer token). */
    subscribe(subscription: PushSubscriptionBody, device: string): Promise<{ id: string; created: boolean }>;
    /** `DELETE /v1/push/subscriptions`: false when no subscription (of this device; the owner's: any) had that endpoint. */
    unsubscribe?(endpoint: string, device: string): Promise<boolean>;
  };
  /**
   * One-time action tokens (ntfy's buttons, `src/notify/action-tokens.ts`):
   * `POST /v1/actions` with `Authorization: Bearer <action token>` answers the
   * one interaction, with the one action, the token was minted for.
   */
  actions?: { redeem(token: string): { conversationId: string; interactionId: string; action: "approve" | "deny" } | undefined };
  /** More about a session for the page: agy's working directory and tmux pane. */
  describe?: (conversationId: string) => { workspace?: string; pane?: string };
  /** Rules learned from answers (`remember`, `/v1/rules`); without it those answer 404. */
  rules?: LearnedRulesApi;
  /**
   * The workspace a learned rule is scoped to: the one the policy decides
   * with (`--workspace`, else agy's own). Without it, `describe`'s.
   */
  ruleWorkspace?: (conversationId: string) => string | undefined;
  /** The OpenAPI document served at `/v1/openapi.json`. */
  openapi: unknown;
  heartbeatMs?: number;
  limiter?: FailureLimiter;
  timers?: SseTimers;
  timeouts?: ServerTimeouts;
  connectionLimits?: ConnectionLimits;
  /** One line per request: method, path without query, status. */
  log?: (line: string) => void;
  /** How long `close()` lets clients take their last bytes before cutting them (default 2000 ms). */
  shutdownGraceMs?: number;
  /** Told about failures that became a 500 (a bug, not a client mistake). */
  onInternalError?: (error: unknown) => void;
  /**
   * Told about errors of the listening server itself, e.g. `accept` failing
   * with EMFILE; the server keeps running.
   */
  onServerError?: (error: NodeJS.ErrnoException) => void;
}

export interface ApiServer {
  readonly server: Server;
  readonly connections: ConnectionGuard;
  /** Ends every SSE stream with a final comment, then closes the server. */
  close(): Promise<void>;
}

/** What every route of one server shares. */
interface ApiContext {
  readonly options: ApiServerOptions;
  readonly limiter: FailureLimiter;
  readonly pairingRoutes: ReturnType<typeof createPairingRoutes>;
  readonly originRefusal: ReturnType<typeof createOriginCheck>;
  /** The open event streams, ended with a final comment on close. */
  readonly streams: Set<SseStream>;
  /** Set by `close`: new requests are refused with 503. */
  closing: boolean;
}

export function createApiServer(options: ApiServerOptions): ApiServer {
  const limiter = options.limiter ?? createFailureLimiter();
  const context: ApiContext = {
    options,
    limiter,
    pairingRoutes: createPairingRoutes({
      bearer: createBearerCheck(options.token),
      limiter,
      ...(options.devices === undefined ? {} : { devices: options.devices }),
      ...(options.pairing === undefined ? {} : { pairing: options.pairing }),
      ...(options.pageUrl === undefined ? {} : { pageUrl: options.pageUrl }),
    }),
    originRefusal: createOriginCheck({
      ...(options.boundHost === undefined ? {} : { boundHost: options.boundHost }),
      ...(options.allowHosts === undefined ? {} : { allowHosts: options.allowHosts }),
      ...(options.cors === undefined ? {} : { cors: options.cors }),
    }),
    streams: new Set<SseStream>(),
    closing: false,
  };
  const server = createHttpServer(options, (req, res, url) => handle(context, req, res, url));
  const connections = guardConnections(server, options.connectionLimits);
  keepAccepting(server, options);
  return {
    server,
    connections,
    close() {
      context.closing = true;
      for (const stream of [...context.streams]) stream.end("server shutting down");
      return new Promise((resolve) => {
        // A client that stopped reading would hold its connection, and so the
        // shutdown, forever: after a grace period every connection is cut.
        const grace = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? 2000);
        server.close(() => {
          clearTimeout(grace);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}

/** The Node server with serve's deadlines, logging each answer. */
function createHttpServer(options: ApiServerOptions, handle: (req: IncomingMessage, res: ServerResponse, url: URL) => void): Server {
  const timeouts = options.timeouts ?? {};
  const server = createServer(
    {
      // Node's defaults (60 s for headers, checked every 30 s) let a silent
      // socket hold a descriptor for up to 90 s; these cut it in seconds.
      headersTimeout: timeouts.headersMs ?? 10_000,
      requestTimeout: timeouts.requestMs ?? 30_000,
      keepAliveTimeout: timeouts.keepAliveMs ?? 5_000,
      connectionsCheckingInterval: timeouts.checkIntervalMs ?? 1_000,
    },
    (req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      res.on("finish", () => options.log?.(`${req.method ?? "?"} ${url.pathname} ${res.statusCode}`));
      handle(req, res, url);
    },
  );
  return server;
}

/**
 * Without a listener an `accept` error (EMFILE when descriptors run out)
 * would be thrown and end the process; the server goes on accepting.
 * (Added once listening, so a failed `listen` still reaches the caller's own listener.)
 */
function keepAccepting(server: Server, options: ApiServerOptions): void {
  server.on("listening", () => {
    server.off("error", onServerError);
    server.on("error", onServerError);
  });
  function onServerError(error: NodeJS.ErrnoException): void {
    options.onServerError?.(error);
  }
}

/** One request: refused while closing or from a foreign origin, CORS preflight answered, else routed. */
function handle(context: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const { options } = context;
  if (context.closing) {
    sendProblem(res, new HttpProblem(503, "Service Unavailable", "the server is shutting down"));
    return;
  }
  const refusal = context.originRefusal(req.headers);
  if (refusal !== undefined) {
    // Nothing more on this connection: whoever sent it is not a client of ours.
    res.setHeader("connection", "close");
    const noHost = (req.headers.host ?? "") === "";
    sendProblem(res, new HttpProblem(noHost ? 400 : 403, noHost ? "Bad Request" : "Forbidden", refusal));
    return;
  }
  if (options.cors !== undefined && req.headers.origin === options.cors) {
    res.setHeader("access-control-allow-origin", options.cors);
    res.setHeader("vary", "Origin");
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-methods": "GET, POST",
        "access-control-allow-headers": "authorization, content-type, last-event-id, x-agy-bridge-client",
        "access-control-max-age": "600",
      });
      res.end();
      return;
    }
  }
  let path: string[];
  try {
    path = url.pathname
      .split("/")
      .filter((p) => p !== "")
      .map((p) => decodeURIComponent(p));
  } catch {
    sendProblem(res, new HttpProblem(400, "Bad Request", "the path is not valid percent-encoding"));
    return;
  }
  route(context, req, res, path).catch((error: unknown) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const problem = toProblem(error);
    if (problem.status === 500) options.onInternalError?.(error);
    sendProblem(res, problem);
  });
}

async function route(context: ApiContext, req: IncomingMessage, res: ServerResponse, path: string[]): Promise<void> {
  const { options } = context;
  const method = req.method ?? "GET";
  if (await publicRoute(context, req, res, path, method)) return;
  const principal = await authenticate(context, req, res);
  const [, collection, id, sub] = path;
  if (collection === "pairing" && id === "codes" && sub === undefined) {
    if (method !== "POST") throw methodNotAllowed();
    return context.pairingRoutes.issue(req, res, principal);
  }
  if (collection === "push" && sub === undefined) return pushRoute(options.push, req, res, id, method, principal);
  if (collection === "openapi.json" && id === undefined) {
    if (method !== "GET") throw methodNotAllowed();
    return sendJson(res, 200, options.openapi);
  }
  if (collection === "rules" && sub === undefined) return serveRules(res, method, id, decidedByOf(principal, req), options.rules);
  if (collection !== "sessions") throw notFound();
  return sessionRoute(context, req, res, path, principal);
}

/** The routes that need no bearer token: the page, its assets, pairing and the buttons of notifications. True when one answered. */
async function publicRoute(context: ApiContext, req: IncomingMessage, res: ServerResponse, path: string[], method: string): Promise<boolean> {
  const { options } = context;
  if (path.length === 0 || (path.length === 1 && path[0] === "index.html")) {
    if (method !== "GET") throw methodNotAllowed();
    sendPage(res, options.page);
    return true;
  }
  const asset = path.length === 1 ? PAGE_ASSETS[path[0]!] : undefined;
  if (asset !== undefined) {
    if (method !== "GET") throw methodNotAllowed();
    res.writeHead(200, { "content-type": asset.type, "cache-control": "no-cache", "x-content-type-options": "nosniff", ...asset.headers });
    res.end(asset.body);
    return true;
  }
  if (path[0] !== "v1") throw new HttpProblem(404, "Not Found", "no such route; the API lives under /v1 (see /v1/openapi.json)");
  if (path[1] === "pairing" && path.length === 2) {
    if (method !== "POST") throw methodNotAllowed();
    await context.pairingRoutes.exchange(req, res);
    return true;
  }
  if (path[1] === "actions" && path.length === 2 && options.actions !== undefined) {
    if (method !== "POST") throw methodNotAllowed();
    await redeemAction(context, req, res);
    return true;
  }
  return false;
}

/** Who holds the request's bearer token (the owner or a paired device); a 401, or 429 after many failures, otherwise. */
async function authenticate(context: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<Principal> {
  const principal = await context.pairingRoutes.authenticate(req.headers.authorization);
  if (principal !== undefined) return principal;
  // Every local process shares 127.0.0.1, so a noisy neighbour must not lock
  // the real token out: only wrong tokens are limited (a 256-bit token is
  // not guessable; the limit keeps a flood of guesses cheap and visible).
  const address = req.socket.remoteAddress ?? "unknown";
  if (context.limiter.blocked(address)) {
    res.setHeader("retry-after", "60");
    throw new HttpProblem(429, "Too Many Requests", "too many failed authentications from this address; wait a minute and check the token");
  }
  context.limiter.fail(address);
  res.setHeader("www-authenticate", 'Bearer realm="agy-bridge"');
  throw new HttpProblem(401, "Unauthorized", "send Authorization: Bearer <token>; the token is in the file `agy-bridge serve` printed, or AGY_BRIDGE_TOKEN");
}

/** `/v1/push/key` and `/v1/push/subscriptions`. */
async function pushRoute(
  push: ApiServerOptions["push"],
  req: IncomingMessage,
  res: ServerResponse,
  id: string | undefined,
  method: string,
  principal: Principal,
): Promise<void> {
  if (id === "key") {
    if (method !== "GET") throw methodNotAllowed();
    if (push === undefined) throw new HttpProblem(404, "Not Found", "this server sends no push notifications");
    return sendJson(res, 200, { publicKey: push.publicKey });
  }
  if (id === "subscriptions") {
    if (method === "DELETE" && push?.unsubscribe !== undefined) {
      const { endpoint } = parseBody(PushUnsubscribeSchema, await readJson(req));
      return sendJson(res, 200, { removed: await push.unsubscribe(endpoint, principal === "owner" ? "owner" : principal.id) });
    }
    if (method !== "POST") throw methodNotAllowed();
    if (push === undefined) throw new HttpProblem(404, "Not Found", "this server sends no push notifications");
    const subscription = parseBody(PushSubscriptionSchema, await readJson(req));
    // Tied to the device that stored it: revoking the device deletes it.
    const stored = await push.subscribe(subscription, principal === "owner" ? "owner" : principal.id);
    return sendJson(res, stored.created ? 201 : 200, stored);
  }
  throw notFound();
}

/** `/v1/sessions` and everything under one session. */
async function sessionRoute(context: ApiContext, req: IncomingMessage, res: ServerResponse, path: string[], principal: Principal): Promise<void> {
  const { options } = context;
  const method = req.method ?? "GET";
  const [, , id, sub, subId, extra] = path;
  if (id === undefined) {
    if (method !== "GET") throw methodNotAllowed();
    const sessions = options.hub.list().map((s) => ({ ...s.summary(), ...options.describe?.(s.conversationId) }));
    // A stable order, so "the first session" means the same one between calls.
    sessions.sort((a, b) => (a.pid ?? 0) - (b.pid ?? 0) || a.conversationId.localeCompare(b.conversationId));
    return sendJson(res, 200, { sessions });
  }
  const session = await sessionNamed(options.hub, id);
  if (session === undefined) throw new HttpProblem(404, "Not Found", `no supervised session has conversation ${id}; GET /v1/sessions lists them`);
  if (sub === "events" && subId === undefined) {
    if (method !== "GET") throw methodNotAllowed();
    return openEvents(context, req, res, id, principal);
  }
  if (sub === "pending" && subId === undefined) {
    if (method !== "GET") throw methodNotAllowed();
    return sendJson(res, 200, { pending: session.pending() });
  }
  if (sub === "interactions" && subId !== undefined && extra === "proposed-rule" && path.length === 6) {
    if (method !== "GET") throw methodNotAllowed();
    // No rule can be saved here, so none is proposed.
    rulesOf(options.rules);
    const choice = proposalQuery(new URL(req.url ?? "/", "http://localhost").searchParams);
    const waiting = session.pending().find((p) => p.interactionId === subId);
    return sendJson(res, 200, (await proposalFor(waiting, subId, placeOf(options, id), choice)).proposal);
  }
  if (sub === "interactions" && subId !== undefined && extra === undefined) {
    if (method !== "POST") throw methodNotAllowed();
    const body = await readJson(req);
    const action = parseBody(InteractionActionSchema, body);
    const { remember } = parseBody(RememberBodySchema, body);
    const waiting = session.pending().find((p) => p.interactionId === subId);
    if (waiting !== undefined) refuseWrongAction(waiting, action, id);
    const decidedBy = decidedByOf(principal, req);
    if (remember !== undefined) {
      return answerRemembering(res, session, waiting, { interactionId: subId, action, remember, decidedBy, place: placeOf(options, id) }, options.rules);
    }
    return sendAnswer(res, await session.respond(subId, action, decidedBy));
  }
  if (sub === "turns" && subId === undefined) {
    if (method !== "POST") throw methodNotAllowed();
    const { text } = parseBody(TurnRequestSchema, await readJson(req));
    return sendTurnOutcome(res, await session.sendTurn(text), session);
  }
  if (sub === "interrupt" && subId === undefined) {
    if (method !== "POST") throw methodNotAllowed();
    return sendJson(res, 200, await session.interrupt());
  }
  throw notFound();
}

/** The approval page says so; any other holder of the token is a bot. A paired device is always the page. */
function decidedByOf(principal: Principal, req: IncomingMessage): string {
  return principal !== "owner" ? decidedByDevice(principal) : req.headers["x-agy-bridge-client"] === "page" ? "page" : "http:default";
}

/** Where a conversation's requests come from, for the scope of a learned rule. */
function placeOf(options: ApiServerOptions, conversationId: string): { conversationId: string; workspace?: string } {
  const workspace = options.ruleWorkspace !== undefined ? options.ruleWorkspace(conversationId) : options.describe?.(conversationId).workspace;
  return { conversationId, ...(workspace === undefined ? {} : { workspace }) };
}

/** A button outside the page: its one-time token names the interaction and the action (no body is read). */
async function redeemAction(context: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { options, limiter } = context;
  const address = req.socket.remoteAddress ?? "unknown";
  if (limiter.blocked(address)) {
    res.setHeader("retry-after", "60");
    throw new HttpProblem(429, "Too Many Requests", "too many failed authentications from this address; wait a minute");
  }
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
  const scope = match === null ? undefined : options.actions?.redeem(match[1]!);
  if (scope === undefined) {
    limiter.fail(address);
    throw new HttpProblem(401, "Unauthorized", "this action token is unknown, used or expired; answer on the page instead");
  }
  const session = options.hub.get(scope.conversationId);
  if (session === undefined) throw new HttpProblem(404, "Not Found", `no supervised session has conversation ${scope.conversationId} any more`, "not_found");
  return sendAnswer(res, await session.respond(scope.interactionId, { action: scope.action }, "ntfy"));
}

/**
 * The session of `id`; while a just-started serve's first refresh is still
 * attaching sessions, waits for it (at most {@link FIRST_REFRESH_WAIT_MS}),
 * so a client reconnecting right after a restart (an `EventSource` stops
 * for good on a 404) is not told its session does not exist.
 */
async function sessionNamed(hub: SessionHub, id: string): Promise<HubSession | undefined> {
  const known = hub.get(id);
  if (known !== undefined) return known;
  await hub.firstRefresh(FIRST_REFRESH_WAIT_MS);
  return hub.get(id);
}

/** `GET /v1/sessions/{id}/events`: an SSE stream following the session's log from `Last-Event-ID`. */
async function openEvents(context: ApiContext, req: IncomingMessage, res: ServerResponse, id: string, principal: Principal): Promise<void> {
  const { options, streams } = context;
  const session = options.hub.get(id);
  if (session === undefined) throw notFound();
  const raw = req.headers["last-event-id"];
  const header = Array.isArray(raw) ? raw[0] : raw;
  const start = await startOf(context, req, res, session, id, header);
  // The client left while the source was asked: no stream to open.
  if (start === undefined) return;
  const closed = new AbortController();
  const streamOptions: Parameters<typeof createSseStream>[1] = {
    onClose: () => cleanup(),
    onDrain: () => follower.drained(),
  };
  if (options.heartbeatMs !== undefined) streamOptions.heartbeatMs = options.heartbeatMs;
  if (options.timers !== undefined) streamOptions.timers = options.timers;
  const stream = createSseStream(res, streamOptions);
  streams.add(stream);
  stream.write("retry: 2000\n\n");
  // The cursor walks the shared log: a client that stops reading holds no queue.
  const follower = followLog({
    source: session,
    sink: stream,
    lastEventId: header,
    start,
    signal: closed.signal,
    onProblem: (message) => options.log?.(message),
  });
  const flush = () => follower.flush();
  // The end of a sourced log's history is no append: it flushes too (the client's id-less `history_end`).
  const unsubscribe = session.log.subscribe(flush, flush);
  const unwatch = options.hub.onChange(() => {
    if (options.hub.get(id) !== session) stream.end("session ended");
  });
  flush();
  const unwatchDevices = endWhenRevoked(options, principal, stream);
  function cleanup(): void {
    unwatchDevices();
    unsubscribe();
    unwatch();
    closed.abort();
    streams.delete(stream);
  }
}

/**
 * Where a stream resumes from `Last-Event-ID`; `undefined` when the client
 * left while a fleet source was asked about an id this serve has not read up to.
 */
async function startOf(
  context: ApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  session: HubSession,
  id: string,
  header: string | undefined,
): Promise<ReturnType<typeof resumeFrom> | undefined> {
  const { options } = context;
  // A position the window no longer covers is rebuilt from a snapshot, announced by `resync` (event-stream.ts).
  const start = resumeFrom(header, session.log);
  if (!("ahead" in start && session.newestEntryId !== undefined)) return start;
  // A stream id this serve has not read up to: one the stream issued is waited for, one it never issued is refused.
  // When the source cannot say (Redis away), the client waits: it was most likely sent.
  const newest = await askBriefly((signal) => session.newestEntryId!(signal), 5_000);
  if (newest !== undefined) {
    const refused = neverIssued(start.ahead, newest.value);
    if (refused !== undefined) throw refused;
  }
  if (options.hub.get(id) !== session) throw notFound();
  if (context.closing) throw new HttpProblem(503, "Service Unavailable", "the server is shutting down");
  if (res.destroyed || req.socket.destroyed) return undefined;
  // The log read on meanwhile.
  return resumeFrom(header, session.log);
}

/**
 * A revoked device loses its open streams too, not only its next request: at once when the
 * device file changes (watched), and by a periodic check where no watch is possible.
 * Returns what stops watching.
 */
function endWhenRevoked(options: ApiServerOptions, principal: Principal, stream: SseStream): () => void {
  const devices = options.devices;
  if (principal === "owner" || devices === undefined) return () => undefined;
  const checkPaired = () => {
    devices.list().then(
      (paired) => {
        if (!paired.some((d) => d.id === principal.id)) stream.end("device revoked");
      },
      () => undefined,
    );
  };
  const recheck = setInterval(checkPaired, options.revocationCheckMs ?? 5_000);
  recheck.unref();
  const unwatchDevices = devices.onChange(checkPaired);
  return () => {
    clearInterval(recheck);
    unwatchDevices();
  };
}

/** What `ask` answers within `ms`, or undefined when it fails or takes longer (it is told to stop then). */
async function askBriefly<T>(ask: (signal: AbortSignal) => Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      stop.abort();
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([
      ask(stop.signal).then(
        (value) => ({ value }),
        () => undefined,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function sendPage(res: ServerResponse, page: string): void {
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy":
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; worker-src 'self'; manifest-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(page);
}
