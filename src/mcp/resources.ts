/**
 * The resources: each session's transcript (`agy://sessions/{id}/transcript`,
 * readable text) and its pending interactions (`…/pending`, JSON). A client
 * that subscribes to one gets `notifications/resources/updated` when it
 * changes; the list changes (`list_changed`) when sessions come and go.
 */
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { McpToolError } from "./mcp-error.js";
import type { SessionPool } from "./session-pool.js";
import { pendingView } from "./tools.js";
import { transcriptLine, transcriptText } from "./transcript-text.js";

const PREFIX = "agy://sessions/";

export function transcriptUri(conversationId: string): string {
  return `${PREFIX}${encodeURIComponent(conversationId)}/transcript`;
}

export function pendingUri(conversationId: string): string {
  return `${PREFIX}${encodeURIComponent(conversationId)}/pending`;
}

/** `{conversationId, which}` of one of our resource URIs, or undefined. */
function parseUri(uri: string): { conversationId: string; which: "transcript" | "pending" } | undefined {
  const match = /^agy:\/\/sessions\/([^/]+)\/(transcript|pending)$/.exec(uri);
  if (match === null) return undefined;
  try {
    return { conversationId: decodeURIComponent(match[1]!), which: match[2] as "transcript" | "pending" };
  } catch {
    return undefined;
  }
}

export interface ResourceWiring {
  /** Stops every subscription's listener. */
  close(): void;
}

export function registerResources(server: McpServer, pool: SessionPool, options: { historyIn(conversationId: string): Promise<void> }): ResourceWiring {
  const listAll = async (which: "transcript" | "pending") => {
    await pool.refresh();
    await pool.get(undefined).catch(() => undefined);
    return {
      resources: pool.list().map((e) => ({
        uri: which === "transcript" ? transcriptUri(e.conversationId) : pendingUri(e.conversationId),
        name: `${which} of ${e.descriptor.title ?? e.conversationId}`,
        mimeType: which === "transcript" ? "text/plain" : "application/json",
      })),
    };
  };
  const entryFor = async (conversationId: string) => {
    const entry = await pool.get(conversationId);
    await options.historyIn(entry.conversationId);
    return entry;
  };

  server.registerResource(
    "transcript",
    new ResourceTemplate(`${PREFIX}{conversationId}/transcript`, { list: () => listAll("transcript") }),
    {
      title: "Conversation transcript",
      description: "The conversation as readable text: turns, answers, tool calls and outputs, prompts and their answers.",
      mimeType: "text/plain",
    },
    async (uri, variables) => {
      const entry = await entryFor(decodeURIComponent(String(variables["conversationId"])));
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: transcriptText(entry.log.after(0, Number.MAX_SAFE_INTEGER).map((e) => e.event)) }] };
    },
  );
  server.registerResource(
    "pending",
    new ResourceTemplate(`${PREFIX}{conversationId}/pending`, { list: () => listAll("pending") }),
    { title: "Pending interactions", description: "The approvals and questions agy waits on now, as JSON.", mimeType: "application/json" },
    async (uri, variables) => {
      const entry = await entryFor(decodeURIComponent(String(variables["conversationId"])));
      const pending = entry.log.pending().map(pendingView);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ conversationId: entry.conversationId, pending }) }] };
    },
  );

  const subscribed = new Set<string>();
  const watching = new Map<string, () => void>();
  const notify = (uri: string) => {
    if (subscribed.has(uri)) void server.server.sendResourceUpdated({ uri }).catch(() => undefined);
  };
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    const parsed = parseUri(uri);
    if (parsed === undefined)
      throw new McpToolError(
        `${JSON.stringify(uri.slice(0, 200))} is not a resource of agy-bridge; subscribe to agy://sessions/{conversationId}/transcript or …/pending.`,
      );
    const entry = await pool.get(parsed.conversationId);
    subscribed.add(uri);
    if (!watching.has(entry.conversationId)) {
      const id = entry.conversationId;
      watching.set(
        id,
        entry.log.subscribe((logged) => {
          if (logged === undefined) return;
          if (transcriptLine(logged.event) !== undefined) notify(transcriptUri(id));
          if (logged.event.type === "interaction_requested" || logged.event.type === "interaction_resolved") notify(pendingUri(id));
        }),
      );
    }
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  const stopList = pool.onChange(() => {
    if (server.isConnected()) server.sendResourceListChanged();
  });
  return {
    close() {
      stopList();
      for (const stop of watching.values()) stop();
      watching.clear();
      subscribed.clear();
    },
  };
}
