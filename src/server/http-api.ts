/**
 * The HTTP + SSE API for remote approval bots and the approval page
 * (docs/http-api.md). Every `/v1` route needs `Authorization: Bearer`;
 * bodies and answers are checked against the zod contract (`contract.ts`);
 * errors are RFC 9457 problem details. Nothing here logs headers or bodies.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { z } from "zod";
import { AgyBridgeError } from "../errors.js";
import { createBearerCheck, createFailureLimiter, type FailureLimiter } from "./bearer-token.js";
import {
  InteractionActionSchema,
  TurnRequestSchema,
  type AnswerResult,
  type Problem,
} from "./contract.js";
import type { SessionHub } from "./session-hub.js";
import { createSseStream, type SseStream, type SseTimers } from "./sse-stream.js";

export interface ApiServerOptions {
  hub: SessionHub;
  /** The bearer token clients must present. */
  token: string;
  /** Allow this one origin cross-origin (no CORS headers otherwise). */
  cors?: string;
  /** The approval page served at `/`. */
  page: string;
  /** The OpenAPI document served at `/v1/openapi.json`. */
  openapi: unknown;
  heartbeatMs?: number;
  limiter?: FailureLimiter;
  timers?: SseTimers;
  /** One line per request: method, path without query, status. */
  log?: (line: string) => void;
  /** How long `close()` lets clients take their last bytes before cutting them (default 2000 ms). */
  shutdownGraceMs?: number;
  /** Told about failures that became a 500 (a bug, not a client mistake). */
  onInternalError?: (error: unknown) => void;
}

export interface ApiServer {
  readonly server: Server;
  /** Ends every SSE stream with a final comment, then closes the server. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const PROBLEM_TYPE = "about:blank";

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly result?: string,
  ) {
    super(detail);
  }
}

export function createApiServer(options: ApiServerOptions): ApiServer {
  const authorized = createBearerCheck(options.token);
  const limiter = options.limiter ?? createFailureLimiter();
  const streams = new Set<SseStream>();
  let closing = false;

  async function route(req: IncomingMessage, res: ServerResponse, path: string[]): Promise<void> {
    const method = req.method ?? "GET";
    if (path.length === 0 || (path.length === 1 && path[0] === "index.html")) {
      if (method !== "GET") throw methodNotAllowed();
      return sendPage(res, options.page);
    }
    if (path[0] !== "v1") throw new HttpProblem(404, "Not Found", "no such route; the API lives under /v1 (see /v1/openapi.json)");
    if (!authorized(req.headers.authorization)) {
      // Every local process shares 127.0.0.1, so a noisy neighbour must not lock
      // the real token out: only wrong tokens are limited (a 256-bit token is
      // not guessable; the limit keeps a flood of guesses cheap and visible).
      const address = req.socket.remoteAddress ?? "unknown";
      if (limiter.blocked(address)) {
        res.setHeader("retry-after", "60");
        throw new HttpProblem(429, "Too Many Requests", "too many failed authentications from this address; wait a minute and check the token");
      }
      limiter.fail(address);
      res.setHeader("www-authenticate", 'Bearer realm="agy-bridge"');
      throw new HttpProblem(401, "Unauthorized", "send Authorization: Bearer <token>; the token is in the file `agy-bridge serve` printed, or AGY_BRIDGE_TOKEN");
    }
    const [, collection, id, sub, subId, extra] = path;
    if (collection === "openapi.json" && id === undefined) {
      if (method !== "GET") throw methodNotAllowed();
      return sendJson(res, 200, options.openapi);
    }
    if (collection !== "sessions") throw notFound();
    if (id === undefined) {
      if (method !== "GET") throw methodNotAllowed();
      const sessions = options.hub.list().map((s) => s.summary());
      // A stable order, so "the first session" means the same one between calls.
      sessions.sort((a, b) => (a.pid ?? 0) - (b.pid ?? 0) || a.conversationId.localeCompare(b.conversationId));
      return sendJson(res, 200, { sessions });
    }
    const session = options.hub.get(id);
    if (session === undefined) throw new HttpProblem(404, "Not Found", `no supervised session has conversation ${id}; GET /v1/sessions lists them`);
    if (sub === "events" && subId === undefined) {
      if (method !== "GET") throw methodNotAllowed();
      return openEvents(req, res, id);
    }
    if (sub === "pending" && subId === undefined) {
      if (method !== "GET") throw methodNotAllowed();
      return sendJson(res, 200, { pending: session.pending() });
    }
    if (sub === "interactions" && subId !== undefined && extra === undefined) {
      if (method !== "POST") throw methodNotAllowed();
      const action = parseBody(InteractionActionSchema, await readJson(req));
      return sendAnswer(res, await session.respond(subId, action));
    }
    if (sub === "turns" && subId === undefined) {
      if (method !== "POST") throw methodNotAllowed();
      const { text } = parseBody(TurnRequestSchema, await readJson(req));
      return sendJson(res, 200, await session.sendTurn(text));
    }
    if (sub === "interrupt" && subId === undefined) {
      if (method !== "POST") throw methodNotAllowed();
      return sendJson(res, 200, await session.interrupt());
    }
    throw notFound();
  }

  function openEvents(req: IncomingMessage, res: ServerResponse, id: string): void {
    const session = options.hub.get(id);
    if (session === undefined) throw notFound();
    let cursor = lastEventId(req.headers["last-event-id"]);
    let waiting = false;
    const streamOptions: Parameters<typeof createSseStream>[1] = {
      onClose: () => cleanup(),
      onDrain: () => {
        waiting = false;
        flush();
      },
    };
    if (options.heartbeatMs !== undefined) streamOptions.heartbeatMs = options.heartbeatMs;
    if (options.timers !== undefined) streamOptions.timers = options.timers;
    const stream = createSseStream(res, streamOptions);
    streams.add(stream);
    // The cursor walks the shared log: a client that stops reading holds no queue.
    function flush(): void {
      if (waiting || stream.closed) return;
      for (const entry of session!.log.since(cursor)) {
        cursor = entry.id;
        if (!stream.write(entry.frame)) {
          waiting = true;
          return;
        }
      }
    }
    stream.write("retry: 2000\n\n");
    const unsubscribe = session.log.subscribe(flush);
    const unwatch = options.hub.onChange(() => {
      if (options.hub.get(id) !== session) stream.end("session ended");
    });
    flush();
    function cleanup(): void {
      unsubscribe();
      unwatch();
      streams.delete(stream);
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    res.on("finish", () => options.log?.(`${req.method ?? "?"} ${url.pathname} ${res.statusCode}`));
    if (closing) {
      sendProblem(res, new HttpProblem(503, "Service Unavailable", "the server is shutting down"));
      return;
    }
    if (options.cors !== undefined && req.headers.origin === options.cors) {
      res.setHeader("access-control-allow-origin", options.cors);
      res.setHeader("vary", "Origin");
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": "GET, POST",
          "access-control-allow-headers": "authorization, content-type, last-event-id",
          "access-control-max-age": "600",
        });
        res.end();
        return;
      }
    }
    let path: string[];
    try {
      path = url.pathname.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p));
    } catch {
      sendProblem(res, new HttpProblem(400, "Bad Request", "the path is not valid percent-encoding"));
      return;
    }
    route(req, res, path).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const problem = toProblem(error);
      if (problem.status === 500) options.onInternalError?.(error);
      sendProblem(res, problem);
    });
  });

  return {
    server,
    close() {
      closing = true;
      for (const stream of [...streams]) stream.end("server shutting down");
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

function toProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof AgyBridgeError) return new HttpProblem(502, "Bad Gateway", error.message);
  return new HttpProblem(500, "Internal Server Error", "the request failed inside agy-bridge; the server log has no more detail than this");
}

function methodNotAllowed(): HttpProblem {
  return new HttpProblem(405, "Method Not Allowed", "this route does not take that method; see /v1/openapi.json");
}

function notFound(): HttpProblem {
  return new HttpProblem(404, "Not Found", "no such route; see /v1/openapi.json");
}

function lastEventId(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === "") return 0;
  if (!/^\d{1,15}$/.test(value.trim())) throw new HttpProblem(400, "Bad Request", "Last-Event-ID must be an event id this API sent (a non-negative integer)");
  return Number(value.trim());
}

function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > MAX_BODY_BYTES) return Promise.reject(new HttpProblem(413, "Content Too Large", `the body is over ${MAX_BODY_BYTES} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpProblem(413, "Content Too Large", `the body is over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", reject);
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new HttpProblem(400, "Bad Request", "the body is not JSON"));
      }
    });
  });
}

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
  throw new HttpProblem(400, "Bad Request", `${where}: ${issue?.message ?? "invalid"}`);
}

function sendAnswer(res: ServerResponse, result: AnswerResult): void {
  if (result.result === "delivered") return sendJson(res, 200, result);
  const status = result.result === "not_found" ? 404 : 409;
  const detail =
    result.reason ??
    (result.result === "already_resolved"
      ? "the interaction was already answered (here, in the TUI or elsewhere)"
      : result.result === "timed_out"
        ? "the prompt timed out and no retry of it is waiting"
        : "no such interaction in this conversation");
  sendProblem(res, new HttpProblem(status, status === 404 ? "Not Found" : "Conflict", detail, result.result));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  const body: Problem = { type: PROBLEM_TYPE, title: problem.title, status: problem.status, detail: problem.detail };
  if (problem.result !== undefined) body.result = problem.result;
  const text = JSON.stringify(body);
  res.writeHead(problem.status, { "content-type": "application/problem+json; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendPage(res: ServerResponse, page: string): void {
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(page);
}
