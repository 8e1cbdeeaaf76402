/**
 * An API server on a free loopback port over scripted sessions, built fresh
 * for each test.
 */
import type { AddressInfo } from "node:net";
import { createApiServer, type ApiServer, type ApiServerOptions } from "../../../src/server/http-api.js";
import { buildOpenApiDocument } from "../../../src/server/openapi.js";
import { createSessionHub, type SessionHub, type SessionHubOptions } from "../../../src/server/session-hub.js";
import { createScriptedSession, type ScriptedSession } from "./scripted-session.js";
import { openSse, type SseClient } from "./sse-client.js";

export const TEST_TOKEN = "test-token-0123456789abcdef-XYZ";

/** A stable fake pid per conversation (4242 for "conv-a"). */
export function pidOf(conversationId: string): number {
  return conversationId === "conv-a" ? 4242 : 5000 + conversationId.length;
}

export interface ApiHarness {
  url: string;
  hub: SessionHub;
  api: ApiServer;
  sessions: Map<string, ScriptedSession>;
  /** Adds a session; the next hub refresh attaches it. */
  addSession(conversationId: string, session?: ScriptedSession): ScriptedSession;
  removeSession(conversationId: string): void;
  /** Resolves once the session's event log has reached `lastId`; fails after 5 s with where it stopped. */
  untilLogAt(conversationId: string, lastId: number): Promise<void>;
  /** An authenticated SSE client on the session's events, resuming after `lastEventId` when given. */
  openEvents(conversationId: string, lastEventId?: string): Promise<SseClient>;
  fetch(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

export async function startApiHarness(
  options: Partial<ApiServerOptions> = {},
  hubOptions: Pick<SessionHubOptions, "retain" | "replayWindow"> = {},
): Promise<ApiHarness> {
  const sessions = new Map<string, ScriptedSession>();
  const hub = createSessionHub({
    ...hubOptions,
    list: async () => [...sessions.keys()].map((conversationId) => ({ conversationId, pid: pidOf(conversationId), title: `title of ${conversationId}` })),
    attach: async (descriptor) => {
      const session = sessions.get(descriptor.conversationId);
      if (session === undefined) throw new Error("gone");
      return session;
    },
  });
  const api = createApiServer({
    hub,
    token: TEST_TOKEN,
    page: "<!doctype html><title>page</title>",
    openapi: buildOpenApiDocument("test"),
    ...options,
  });
  await new Promise<void>((resolve) => api.server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  return {
    url,
    hub,
    api,
    sessions,
    addSession(conversationId, session = createScriptedSession(conversationId)) {
      sessions.set(conversationId, session);
      return session;
    },
    removeSession(conversationId) {
      sessions.delete(conversationId);
    },
    async untilLogAt(conversationId, lastId) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const reached = hub.get(conversationId)?.log.lastId;
        if (reached !== undefined && reached >= lastId) return;
        if (Date.now() > deadline) throw new Error(`the log of ${conversationId} reached ${reached ?? "nothing"}, not ${lastId}`);
        await new Promise((r) => setImmediate(r));
      }
    },
    openEvents(conversationId, lastEventId) {
      return openSse(`${url}/v1/sessions/${conversationId}/events`, {
        authorization: `Bearer ${TEST_TOKEN}`,
        ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
      });
    },
    fetch(path, init = {}) {
      const { token = TEST_TOKEN, headers, ...rest } = init;
      const h = new Headers(headers);
      if (token !== null) h.set("authorization", `Bearer ${token}`);
      return fetch(`${url}${path}`, { ...rest, headers: h });
    },
    async close() {
      await api.close();
      await hub.close();
    },
  };
}
