/**
 * `agy-bridge serve --redis` as a real process: host A's serve has no agy of
 * its own; it lists host B's session from the fleet index, labelled with
 * its host, and a page approval on it reaches agy on host B through host
 * B's relay — exactly once.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRelay } from "../../src/fleet/index.js";
import { AgySession } from "../../src/session/index.js";
import { startSimServer } from "../../src/sim/index.js";
import { startServeProcess } from "../server/support/serve-process.js";
import { startRedis } from "./support/redis-process.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe("agy-bridge serve --redis", { timeout: 120_000 }, () => {
  it("serves host B's session from the fleet, and a page approval reaches agy on host B once", async () => {
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

    const dir = await mkdtemp(join(tmpdir(), "agyb-serve-redis-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const serve = await startServeProcess({ configHome: dir, args: ["--redis", redis.url, "--refresh-ms", "200"] });
    cleanups.push(() => serve.stop());
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${serve.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${serve.token}`, "content-type": "application/json", "x-agy-bridge-client": "page" },
      });

    const listed = await until(async () => {
      const { sessions } = (await (await call("/v1/sessions")).json()) as { sessions: { conversationId: string; host?: string }[] };
      return sessions.find((s) => s.conversationId === conversationId);
    }, "host B's session on host A's serve");
    expect(listed.host).toBe("host-b");

    sim.engine.tuiPort().submitTurn("Run pwd");
    const pending = await until(async () => {
      const body = (await (await call(`/v1/sessions/${conversationId}/pending`)).json()) as { pending: { interactionId: string; stepIndex: number }[] };
      return body.pending[0];
    }, "the gate on host A's serve");
    const response = await call(`/v1/sessions/${conversationId}/interactions/${pending.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: "delivered", stepIndex: pending.stepIndex });
    const again = await call(`/v1/sessions/${conversationId}/interactions/${pending.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(again.status).toBe(409);
    const step = sim.engine.conversation(conversationId)!.steps[pending.stepIndex] as { completedInteractions?: unknown[] };
    expect(step.completedInteractions).toHaveLength(1);
    expect(serve.stderr()).not.toContain(serve.token);
  });

  it("refuses --policy with --redis, and says so when Redis cannot be reached", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-serve-redis-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await expect(startServeProcess({ configHome: dir, args: ["--redis", "redis://127.0.0.1:1", "--policy", join(dir, "p.yaml")] })).rejects.toThrow(
      /--policy and --redis do not go together/,
    );
    await expect(startServeProcess({ configHome: dir, args: ["--redis", "redis://127.0.0.1:1"] })).rejects.toThrow(
      /cannot reach Redis at redis:\/\/127\.0\.0\.1:1/,
    );
  });
});
