/**
 * A serve that just started is still attaching the sessions its first
 * refresh listed: a client asking for one of them (a bot reconnecting after
 * a restart, whose EventSource would stop for good on a 404) waits for the
 * attach instead of being told the session does not exist; one asking for a
 * conversation nobody listed still gets the 404 once that refresh is done.
 */
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { createApiServer, type ApiServer } from "../../src/server/http-api.js";
import { buildOpenApiDocument } from "../../src/server/openapi.js";
import { createSessionHub, type SessionHub } from "../../src/server/session-hub.js";
import { TEST_TOKEN } from "./support/api-harness.js";
import { createScriptedSession } from "./support/scripted-session.js";
import { openSse, type SseClient } from "./support/sse-client.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function heldWorld() {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let attaching = false;
  const session = createScriptedSession("conv-a");
  const hub: SessionHub = createSessionHub({
    list: async () => [{ conversationId: "conv-a" }],
    attach: async () => {
      attaching = true;
      await held;
      return session;
    },
  });
  const api: ApiServer = createApiServer({ hub, token: TEST_TOKEN, page: "", openapi: buildOpenApiDocument("test") });
  await new Promise<void>((resolve) => api.server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    release();
    await api.close();
    await hub.close();
  });
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  // As serve does: listening first, then the first refresh.
  const refreshed = hub.refresh();
  const deadline = Date.now() + 5000;
  while (!attaching) {
    if (Date.now() > deadline) throw new Error("the hub never began attaching conv-a");
    await new Promise((r) => setTimeout(r, 5));
  }
  return { url, session, release, refreshed, api };
}

it("holds a request for a session the first refresh is still attaching, then serves it", async () => {
  const w = await heldWorld();
  w.session.push({ type: "user_message", conversationId: "conv-a", trajectoryId: "t", text: "hello" } as never);
  let client: SseClient | undefined;
  const arrived = new Promise<import("node:http").ServerResponse>((resolve) => w.api.server.once("request", (_req, res) => resolve(res)));
  const opening = openSse(`${w.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` }).then((c) => (client = c));
  const res = await arrived;
  // The route has run as far as it can on its own (a 404 is written without waiting on anything).
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  expect(res.headersSent, "the request was answered while the attach was held").toBe(false);
  w.release();
  await opening;
  cleanups.push(() => client?.close());
  await client!.until((c) => c.messages.length >= 1, "the session's first event");
  expect(client!.messages.map((m) => m.event)).toEqual(["user_message"]);
  await w.refreshed;
});

it("still answers 404 for a conversation the first refresh did not list, once that refresh is done", async () => {
  const w = await heldWorld();
  const asked = fetch(`${w.url}/v1/sessions/conv-zzz/pending`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
  w.release();
  const response = await asked;
  expect(response.status).toBe(404);
  expect(((await response.json()) as { detail: string }).detail).toMatch(/no supervised session has conversation conv-zzz/);
});
