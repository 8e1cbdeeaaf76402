/**
 * The pieces `serve --redis` is made of, wired as serve wires its hub: the
 * fleet index as the session list, remote sessions as the attached sessions.
 * A page approval on host A's API reaches agy on host B.
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startSimServer } from "../../src/sim/index.js";
import { AgySession } from "../../src/session/index.js";
import { createFleetClient, createRelay, createRemoteSession } from "../../src/fleet/index.js";
import { createApiServer } from "../../src/server/http-api.js";
import { buildOpenApiDocument } from "../../src/server/openapi.js";
import { createSessionHub, type SupervisedSession } from "../../src/server/session-hub.js";
import { startRedis } from "./support/redis-process.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const TOKEN = "fleet-test-token-0123456789abcdef";

describe("an API over the fleet", () => {
  it("lists host B's session on host A's API and delivers a page approval to agy on host B", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const sim = await startSimServer({ speed: 0.05 });
    cleanups.push(() => sim.close());
    const conversationId = sim.engine.activeConversationId;
    const relay = createRelay({
      redis: redis.client(),
      host: "host-b",
      instanceId: "host-b-1",
      claimIdleMs: 300,
      blockMs: 100,
      list: async () => [conversationId],
      attach: (id) => AgySession.attach({ url: sim.plainUrl, conversationId: id }),
    });
    cleanups.push(() => relay.close());
    await relay.start();

    // Host A: no agy of its own, only Redis.
    const client = createFleetClient({ redis: redis.client(), blockMs: 100 });
    const hosts = new Map<string, string>();
    const hub = createSessionHub({
      list: async () =>
        (await client.sessions()).map((entry) => {
          hosts.set(entry.conversationId, entry.host);
          return { conversationId: entry.conversationId, title: `${entry.host}` };
        }),
      attach: async (descriptor) =>
        createRemoteSession({
          client,
          host: hosts.get(descriptor.conversationId)!,
          conversationId: descriptor.conversationId,
          timeoutMs: 10_000,
        }) satisfies SupervisedSession,
    });
    cleanups.push(() => hub.close());
    const api = createApiServer({ hub, token: TOKEN, page: "<!doctype html><title>page</title>", openapi: buildOpenApiDocument("test") });
    await new Promise<void>((resolve) => api.server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => api.close());
    const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          "content-type": "application/json",
          "x-agy-bridge-client": "page",
          ...(init.headers as Record<string, string> | undefined),
        },
      });

    await until(async () => {
      await hub.refresh();
      const { sessions } = (await (await call("/v1/sessions")).json()) as { sessions: { conversationId: string; title?: string }[] };
      return sessions.find((s) => s.conversationId === conversationId && s.title === "host-b");
    }, "host B's session, labelled with its host, on host A's API");

    sim.engine.tuiPort().submitTurn("Run pwd");
    const pending = await until(async () => {
      const body = (await (await call(`/v1/sessions/${conversationId}/pending`)).json()) as { pending: { interactionId: string; stepIndex: number }[] };
      return body.pending[0];
    }, "the gate on host A's API");
    const response = await call(`/v1/sessions/${conversationId}/interactions/${pending.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: "delivered", stepIndex: pending.stepIndex });
    const step = sim.engine.conversation(conversationId)!.steps[pending.stepIndex] as { completedInteractions?: unknown[] };
    expect(step.completedInteractions).toHaveLength(1);
    // Who decided rides to host B's events: the page, through the relay.
    await until(async () => {
      const entries = (await redis.client().xrange(`agy:events:host-b:${conversationId}`, "-", "+")) as [string, string[]][];
      return entries.map(([, f]) => f[f.indexOf("event") + 1]!).find((e) => e.includes('"interaction_resolved"') && e.includes('"decidedBy":"relay:page"'));
    }, "the resolution decided by relay:page");
  });
});
