/**
 * One MCP server for one client connection (a stdio process, or one
 * streamable-HTTP session): the tools and resources over a shared
 * {@link SessionPool}. Decisions carry the client's own name (`mcp:<name>`).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { AgentRules } from "./agent-answers.js";
import { historyIn } from "./log-waits.js";
import { registerResources } from "./resources.js";
import type { SessionPool } from "./session-pool.js";
import { registerTools } from "./tools.js";

export interface AgyMcpServerOptions {
  pool: SessionPool;
  rules?: AgentRules;
  /** The version the server reports at initialize. */
  version: string;
  /** Default 2000 ms. */
  progressIntervalMs?: number;
}

export interface AgyMcpServer {
  readonly mcp: McpServer;
  close(): Promise<void>;
}

/** `mcp:<name>`, with the name the client gave at initialize cut to safe characters. */
export function decidedByFor(clientName: string | undefined): string {
  const name = (clientName ?? "")
    .replace(/[^A-Za-z0-9._@/+-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return `mcp:${name === "" ? "unnamed-client" : name}`;
}

const INSTRUCTIONS = `agy-bridge supervises attended Google Antigravity (agy) sessions running in tmux.
Typical loop: list_sessions; send_turn; wait_for {until: "pending_interaction"} or {until: "idle"};
approve / deny / answer what waits (the team's policy may refuse an approve); read_events with the
returned cursor to see what happened. Every decision is recorded in the audit log under your client name.`;

export function createAgyMcpServer(options: AgyMcpServerOptions): AgyMcpServer {
  const mcp = new McpServer(
    { name: "agy-bridge", version: options.version },
    { capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } }, instructions: INSTRUCTIONS },
  );
  const historyTimeoutMs = 30_000;
  registerTools(mcp, {
    pool: options.pool,
    rules: options.rules ?? {},
    decidedBy: () => decidedByFor(mcp.server.getClientVersion()?.name),
    historyTimeoutMs,
    ...(options.progressIntervalMs === undefined ? {} : { progressIntervalMs: options.progressIntervalMs }),
  });
  const resources = registerResources(mcp, options.pool, {
    async historyIn(conversationId) {
      await historyIn((await options.pool.get(conversationId)).log, historyTimeoutMs);
    },
  });
  return {
    mcp,
    async close() {
      resources.close();
      await mcp.close();
    },
  };
}
