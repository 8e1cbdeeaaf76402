/**
 * The MCP front door (docs/mcp.md): agents list attended agy sessions,
 * follow them, send turns and answer prompts through MCP tools and
 * resources, under the same rules as the CLI — a thin adapter over
 * `session/`, with the policy's deny holding and every decision audited.
 */
export { createAgyMcpServer, decidedByFor, type AgyMcpServer, type AgyMcpServerOptions } from "./mcp-server.js";
export { createMcpHttpServer, type McpHttpOptions, type McpHttpServer } from "./http-server.js";
export { createStdioTransport, MAX_STDIO_LINE_BYTES, type AgyStdioTransport, type StdioTransportOptions } from "./stdio-transport.js";
export { createSessionPool, type PooledSession, type SessionPool, type SessionPoolOptions } from "./session-pool.js";
export type { McpSessionSource, SessionDescriptor } from "./session-source.js";
export type { AgentRules } from "./agent-answers.js";
export { McpToolError } from "./mcp-error.js";
export { pendingUri, transcriptUri } from "./resources.js";
