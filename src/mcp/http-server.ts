/**
 * MCP over streamable HTTP at `/mcp`: one {@link AgyMcpServer} per MCP
 * session (the `mcp-session-id` the SDK's transport hands out). Every request
 * passes the injected `Host`/`Origin` check (403) and bearer check (401)
 * before the SDK sees a byte; the CLI injects serve's own checks, so both
 * front doors follow one set of rules. Nothing here logs headers or bodies.
 *
 * Bounded like `serve`: header and request deadlines of seconds and a short
 * keep-alive cut silent sockets (the CLI adds serve's connection guard, which
 * pushes out the oldest idle socket when there are too many), and MCP
 * sessions cannot pile up: one without a request for `sessionIdleMs` is
 * closed, and an initialize at the cap closes the session used longest ago
 * that has no request in progress — only when every open session is busy is
 * it refused (503). Abandoned sessions never lock a client out.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { AgyMcpServer } from "./mcp-server.js";

export interface McpHttpOptions {
  /** A new MCP server for each MCP session. */
  createServer(): AgyMcpServer;
  /** True when the `Authorization` header carries the token (constant time). */
  authorize(authorization: string | undefined): boolean;
  /** Why a request's Host/Origin is refused (a sentence), or undefined when it may proceed. */
  checkOrigin(headers: IncomingHttpHeaders): string | undefined;
  /** Wrong tokens per address: `blocked` ones get 429. */
  limiter?: { blocked(address: string): boolean; fail(address: string): void };
  /** MCP sessions open at once (default 32); an initialize beyond it closes the least recently used idle one, or gets 503 when all are busy. */
  maxSessions?: number;
  /** An MCP session with no request in progress for this long is closed (default 30 minutes). */
  sessionIdleMs?: number;
  /** Deadlines of the listener (defaults as `serve`'s). */
  timeouts?: McpHttpTimeouts;
  /** Told when an MCP session is closed by the server (expired, or pushed out at the cap). */
  onSessionClosed?: (why: "expired" | "pushed_out") => void;
  /** Told about failures that became a 500 (a bug, not a client mistake). */
  onInternalError?: (error: unknown) => void;
}

export interface McpHttpTimeouts {
  /** A client must send its whole header block within this (default 10 000 ms). */
  headersMs?: number;
  /** …and its whole request, body included, within this (default 30 000 ms). */
  requestMs?: number;
  /** An idle kept-alive connection is closed after this (default 5 000 ms). */
  keepAliveMs?: number;
  /** How often the two deadlines above are checked (default 1 000 ms). */
  checkIntervalMs?: number;
}

/** The default idle expiry of an MCP session. */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

export interface McpHttpServer {
  readonly server: Server;
  /** MCP sessions open now. */
  readonly sessions: number;
  /** Closes every MCP session and the listener. */
  close(): Promise<void>;
}

const PATH = "/mcp";
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Open {
  transport: StreamableHTTPServerTransport;
  server: AgyMcpServer;
  /** Requests of this session in progress (an open SSE stream, a tool call waiting). */
  busy: number;
  /** Closes it after `sessionIdleMs` without a request in progress. */
  expiry?: ReturnType<typeof setTimeout> | undefined;
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<{ body: unknown } | { error: string; status: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return { error: `the request body is larger than ${MAX_BODY_BYTES} bytes`, status: 413 };
    chunks.push(chunk as Buffer);
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { error: "the request body is not JSON; send a JSON-RPC message", status: 400 };
  }
}

/** The open MCP sessions and their expiry. */
interface SessionTable {
  /** In order of last use: the first idle entry is the one used longest ago. */
  readonly open: Map<string, Open>;
  /** MCP sessions open at once. */
  readonly max: number;
  /** Marks a request of the session in progress until `res` closes; the session moves to the back of the line. */
  use(id: string, open: Open, res: ServerResponse): void;
  /** Room for one more session: true, after pushing out the least recently used idle one if at the cap. */
  makeRoom(): boolean;
}

export function createMcpHttpServer(options: McpHttpOptions): McpHttpServer {
  const table = createSessionTable(options);
  const sessions = table.open;
  let closing = false;
  const timeouts = options.timeouts ?? {};
  const server = createServer(
    {
      // As serve: Node's defaults (60 s for headers, checked every 30 s) let a
      // silent socket hold a descriptor for up to 90 s; these cut it in seconds.
      headersTimeout: timeouts.headersMs ?? 10_000,
      requestTimeout: timeouts.requestMs ?? 30_000,
      keepAliveTimeout: timeouts.keepAliveMs ?? 5_000,
      connectionsCheckingInterval: timeouts.checkIntervalMs ?? 1_000,
    },
    (req, res) => {
      handle(options, table, closing, req, res).catch((error: unknown) => {
        options.onInternalError?.(error);
        refuse(res, 500, "agy-bridge failed inside while answering; see its stderr");
      });
    },
  );

  return {
    server,
    get sessions() {
      return sessions.size;
    },
    async close() {
      closing = true;
      const open = [...sessions.values()];
      for (const o of open) clearTimeout(o.expiry);
      sessions.clear();
      await Promise.allSettled(
        open.map(async (o) => {
          await o.transport.close();
          await o.server.close();
        }),
      );
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function createSessionTable(options: McpHttpOptions): SessionTable {
  const sessions = new Map<string, Open>();
  const max = Math.max(1, options.maxSessions ?? 32);
  const idleMs = options.sessionIdleMs ?? MCP_SESSION_IDLE_MS;
  const end = (id: string, open: Open, why: "expired" | "pushed_out"): void => {
    if (sessions.get(id) !== open) return;
    sessions.delete(id);
    clearTimeout(open.expiry);
    options.onSessionClosed?.(why);
    void open.transport.close().catch(() => undefined);
    void open.server.close().catch(() => undefined);
  };
  const idle = (id: string, open: Open): void => {
    clearTimeout(open.expiry);
    open.expiry = setTimeout(() => end(id, open, "expired"), idleMs);
    open.expiry.unref();
  };
  return {
    open: sessions,
    max,
    use(id, open, res) {
      sessions.delete(id);
      sessions.set(id, open);
      open.busy++;
      clearTimeout(open.expiry);
      open.expiry = undefined;
      res.once("close", () => {
        open.busy = Math.max(0, open.busy - 1);
        if (open.busy === 0 && sessions.get(id) === open) idle(id, open);
      });
    },
    makeRoom() {
      if (sessions.size < max) return true;
      for (const [id, open] of sessions) {
        if (open.busy > 0) continue;
        end(id, open, "pushed_out");
        return true;
      }
      return false;
    },
  };
}

async function handle(options: McpHttpOptions, table: SessionTable, closing: boolean, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (refusedAtTheDoor(options, closing, req, res)) return;
  const sessionId = req.headers["mcp-session-id"];
  const id = Array.isArray(sessionId) ? sessionId[0] : sessionId;
  if (id !== undefined) return continueSession(table, id, req, res);
  return initialize(options, table, req, res);
}

/** Origin, path, token and shutdown, checked before the SDK sees a byte; true when the request was refused. */
function refusedAtTheDoor(options: McpHttpOptions, closing: boolean, req: IncomingMessage, res: ServerResponse): boolean {
  const originProblem = options.checkOrigin(req.headers);
  if (originProblem !== undefined) {
    refuse(res, 403, originProblem);
    return true;
  }
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path !== PATH) {
    refuse(res, 404, `no such route; MCP lives at ${PATH}`);
    return true;
  }
  const address = req.socket.remoteAddress ?? "unknown";
  if (!options.authorize(req.headers.authorization)) {
    if (options.limiter?.blocked(address) === true) refuse(res, 429, "too many requests with a wrong token; wait a minute", { "retry-after": "60" });
    else {
      options.limiter?.fail(address);
      refuse(res, 401, "send Authorization: Bearer <token> with the token of agy-bridge (the token file, or AGY_BRIDGE_TOKEN)", {
        "www-authenticate": 'Bearer realm="agy-bridge"',
      });
    }
    return true;
  }
  if (closing) {
    refuse(res, 503, "agy-bridge mcp is shutting down");
    return true;
  }
  return false;
}

/** A request of an MCP session that is open (`mcp-session-id`). */
async function continueSession(table: SessionTable, id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const open = table.open.get(id);
  if (open === undefined) return refuse(res, 404, "no such MCP session (it ended, expired after being idle, or agy-bridge restarted); initialize a new one");
  table.use(id, open, res);
  if (req.method === "POST") {
    const read = await readJson(req);
    if ("error" in read) return refuse(res, read.status, read.error);
    return open.transport.handleRequest(req, res, read.body);
  }
  return open.transport.handleRequest(req, res);
}

/** An initialize without a session: a new MCP server and transport, when there is room. */
async function initialize(options: McpHttpOptions, table: SessionTable, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "POST") return refuse(res, 400, "without an mcp-session-id header only an initialize POST is accepted");
  const read = await readJson(req);
  if ("error" in read) return refuse(res, read.status, read.error);
  if (!isInitializeRequest(read.body)) return refuse(res, 400, "send initialize first; other requests need the mcp-session-id it returns");
  if (!table.makeRoom())
    return refuse(res, 503, `${table.max} MCP sessions are open and each has a request in progress; close one (DELETE ${PATH}) or try again when one is done`);

  const sessions = table.open;
  const server = options.createServer();
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (newId) => {
      const open: Open = { transport, server, busy: 0 };
      sessions.set(newId, open);
      table.use(newId, open, res);
    },
  });
  transport.onclose = () => {
    const sid = transport.sessionId;
    const open = sid === undefined ? undefined : sessions.get(sid);
    if (sid !== undefined && open?.transport === transport) {
      clearTimeout(open.expiry);
      sessions.delete(sid);
    }
    void server.close().catch(() => undefined);
  };
  await server.mcp.connect(transport);
  await transport.handleRequest(req, res, read.body);
}
