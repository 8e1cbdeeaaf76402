/**
 * MCP over streamable HTTP at `/mcp`: one {@link AgyMcpServer} per MCP
 * session (the `mcp-session-id` the SDK's transport hands out). Every request
 * passes the injected `Host`/`Origin` check (403) and bearer check (401)
 * before the SDK sees a byte; the CLI injects serve's own checks, so both
 * front doors follow one set of rules. Nothing here logs headers or bodies.
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
  /** MCP sessions open at once (default 32); an initialize beyond it gets 503. */
  maxSessions?: number;
  /** Told about failures that became a 500 (a bug, not a client mistake). */
  onInternalError?: (error: unknown) => void;
}

export interface McpHttpServer {
  readonly server: Server;
  /** Closes every MCP session and the listener. */
  close(): Promise<void>;
}

const PATH = "/mcp";
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Open {
  transport: StreamableHTTPServerTransport;
  server: AgyMcpServer;
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

export function createMcpHttpServer(options: McpHttpOptions): McpHttpServer {
  const sessions = new Map<string, Open>();
  const maxSessions = options.maxSessions ?? 32;
  let closing = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const originProblem = options.checkOrigin(req.headers);
    if (originProblem !== undefined) return refuse(res, 403, originProblem);
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== PATH) return refuse(res, 404, `no such route; MCP lives at ${PATH}`);
    const address = req.socket.remoteAddress ?? "unknown";
    if (!options.authorize(req.headers.authorization)) {
      if (options.limiter?.blocked(address) === true) return refuse(res, 429, "too many requests with a wrong token; wait a minute", { "retry-after": "60" });
      options.limiter?.fail(address);
      return refuse(res, 401, "send Authorization: Bearer <token> with the token of agy-bridge (the token file, or AGY_BRIDGE_TOKEN)", { "www-authenticate": 'Bearer realm="agy-bridge"' });
    }
    if (closing) return refuse(res, 503, "agy-bridge mcp is shutting down");

    const sessionId = req.headers["mcp-session-id"];
    const id = Array.isArray(sessionId) ? sessionId[0] : sessionId;
    if (id !== undefined) {
      const open = sessions.get(id);
      if (open === undefined) return refuse(res, 404, "no such MCP session (it ended, or agy-bridge restarted); initialize a new one");
      if (req.method === "POST") {
        const read = await readJson(req);
        if ("error" in read) return refuse(res, read.status, read.error);
        return open.transport.handleRequest(req, res, read.body);
      }
      return open.transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return refuse(res, 400, "without an mcp-session-id header only an initialize POST is accepted");
    const read = await readJson(req);
    if ("error" in read) return refuse(res, read.status, read.error);
    if (!isInitializeRequest(read.body)) return refuse(res, 400, "send initialize first; other requests need the mcp-session-id it returns");
    if (sessions.size >= maxSessions) return refuse(res, 503, `${maxSessions} MCP sessions are open already; close one (DELETE ${PATH}) and try again`);

    const server = options.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (newId) => {
        sessions.set(newId, { transport, server });
      },
    });
    transport.onclose = () => {
      const sid = transport.sessionId;
      if (sid !== undefined) sessions.delete(sid);
      void server.close().catch(() => undefined);
    };
    await server.mcp.connect(transport);
    await transport.handleRequest(req, res, read.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.onInternalError?.(error);
      refuse(res, 500, "agy-bridge failed inside while answering; see its stderr");
    });
  });

  return {
    server,
    async close() {
      closing = true;
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map(async (o) => {
        await o.transport.close();
        await o.server.close();
      }));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
