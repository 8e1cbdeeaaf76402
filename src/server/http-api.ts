/**
 * The HTTP + SSE API for remote approval bots and the approval page
 * (docs/http-api.md). Every route checks `Host` and `Origin` first
 * (`request-origin.ts`); every `/v1` route needs `Authorization: Bearer`;
 * bodies and answers are checked against the zod contract (`contract.ts`);
 * errors are RFC 9457 problem details. Idle sockets are cut by deadlines and
 * shed over a cap (`connection-guard.ts`). Nothing here logs headers or bodies.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ApiContext, ApiServerOptions } from "./api-options.js";
import { createBearerCheck, createFailureLimiter } from "./bearer-token.js";
import { guardConnections, type ConnectionGuard } from "./connection-guard.js";
import { HttpProblem, sendProblem, toProblem } from "./http-problem.js";
import { createPairingRoutes } from "./pairing-routes.js";
import { createOriginCheck } from "./request-origin.js";
import { createDispatch, type Dispatch } from "./route-dispatch.js";
import { ROUTES } from "./routes.js";
import type { SseStream } from "./sse-stream.js";

export type { ApiServerOptions, ServerTimeouts } from "./api-options.js";

export interface ApiServer {
  readonly server: Server;
  readonly connections: ConnectionGuard;
  /** Ends every SSE stream with a final comment, then closes the server. */
  close(): Promise<void>;
}

/** What answers before the route table, and the table's dispatcher. */
interface Front {
  readonly context: ApiContext;
  readonly originRefusal: ReturnType<typeof createOriginCheck>;
  readonly dispatch: Dispatch;
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
    streams: new Set<SseStream>(),
    closing: false,
  };
  const front: Front = {
    context,
    originRefusal: createOriginCheck({
      ...(options.boundHost === undefined ? {} : { boundHost: options.boundHost }),
      ...(options.allowHosts === undefined ? {} : { allowHosts: options.allowHosts }),
      ...(options.cors === undefined ? {} : { cors: options.cors }),
    }),
    dispatch: createDispatch(context, ROUTES),
  };
  const server = createHttpServer(options, (req, res, url) => handle(front, req, res, url));
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
function handle(front: Front, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const { context } = front;
  const { options } = context;
  if (context.closing) {
    sendProblem(res, new HttpProblem(503, "Service Unavailable", "the server is shutting down"));
    return;
  }
  const refusal = front.originRefusal(req.headers);
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
  front.dispatch(req, res, url, path).catch((error: unknown) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const problem = toProblem(error);
    if (problem.status === 500) options.onInternalError?.(error);
    sendProblem(res, problem);
  });
}
