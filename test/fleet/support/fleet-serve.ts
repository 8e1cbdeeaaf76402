/**
 * serve's hub and API over the fleet, wired as `serve --redis` wires them
 * (the fleet session source: the index's sessions, a remote session each,
 * read through a fleet client), on a free loopback port. For tests of what
 * serve makes of the streams.
 */
import type { AddressInfo } from "node:net";
import { createFleetClient, createFleetSessionSource, type FleetClient } from "../../../src/fleet/index.js";
import { createApiServer } from "../../../src/server/http-api.js";
import { buildOpenApiDocument } from "../../../src/server/openapi.js";
import { createServeSessions } from "../../../src/server/serve-sessions.js";
import type { SessionHub } from "../../../src/server/session-hub.js";
import { openSse, type SseClient } from "../../server/support/sse-client.js";
import type { RelayWorld } from "./relay-world.js";
import { until } from "../../support/until.js";

export const FLEET_SERVE_TOKEN = "fleet-serve-token-0123456789abcdef";

export interface FleetServe {
  hub: SessionHub;
  /** The hub's event log of the world's conversation. */
  log(): NonNullable<ReturnType<SessionHub["get"]>>["log"];
  /** Waits until the log has read `n` entries (15 s, then fails saying how many it read). */
  read(n: number): Promise<void>;
  /** An SSE client on the conversation's events (closed after the test), resuming after `lastEventId` when given. */
  open(lastEventId?: string): Promise<SseClient>;
  /** One plain request for the events with a Last-Event-ID (for status codes). */
  call(lastEventId: string): Promise<Response>;
  /** `GET /v1/sessions`. */
  sessions(): Promise<{ conversationId: string; status: string; pending: number; host?: string }[]>;
}

export async function serveOverFleet(
  w: RelayWorld,
  cleanups: (() => Promise<unknown>)[],
  options: { client?: FleetClient; replayWindow?: number } = {},
): Promise<FleetServe> {
  const client = options.client ?? createFleetClient({ redis: w.redis.client(), blockMs: 100 });
  const source = createFleetSessionSource(client, { timeoutMs: 10_000 });
  // The sessions exactly as `serve --redis` builds them (cli/serve-command.ts).
  const sessions = createServeSessions({
    ...(options.replayWindow === undefined ? {} : { replayWindow: options.replayWindow }),
    from: { remote: source },
  });
  const { hub } = sessions;
  cleanups.push(() => sessions.close());
  const api = createApiServer({ hub, token: FLEET_SERVE_TOKEN, page: "<!doctype html><title>page</title>", openapi: buildOpenApiDocument("test") });
  await new Promise<void>((resolve) => api.server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => api.close());
  // The relay writes the index entry as it starts following: refreshed until serve lists it.
  await until(
    async () => {
      await hub.refresh();
      return hub.get(w.conversationId);
    },
    "serve to list the world's conversation from the fleet index",
    { ms: 15_000, seen: () => `it lists ${JSON.stringify(hub.list().map((s) => s.conversationId))}` },
  );
  const sessionsUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/v1/sessions`;
  const eventsUrl = `${sessionsUrl}/${w.conversationId}/events`;
  const authorization = `Bearer ${FLEET_SERVE_TOKEN}`;
  const log = () => hub.get(w.conversationId)!.log;
  return {
    hub,
    log,
    async read(n) {
      await until(() => (log().lastId >= n ? true : undefined), `serve to read ${n} entries`, { ms: 15_000, seen: () => `it read ${log().lastId}` });
    },
    async open(lastEventId) {
      const sse = await openSse(eventsUrl, { authorization, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) });
      cleanups.push(async () => sse.close());
      return sse;
    },
    call: (lastEventId) => fetch(eventsUrl, { headers: { authorization, "last-event-id": lastEventId } }),
    async sessions() {
      const res = await fetch(sessionsUrl, { headers: { authorization } });
      return ((await res.json()) as { sessions: { conversationId: string; status: string; pending: number; host?: string }[] }).sessions;
    },
  };
}
