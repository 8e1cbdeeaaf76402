import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSelfSignedCertificate } from "../../src/sim/index.js";
import { runRelayOnce, startRelayProcess } from "./support/relay-process.js";
import { startRelayWorld } from "./support/relay-world.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe("the relay over TLS (rediss://)", { timeout: 60_000 }, () => {
  it("connects to a TLS Redis whose certificate it trusts, publishes and takes commands", async () => {
    const tls = await createSelfSignedCertificate();
    const w = await startRelayWorld({ tls });
    cleanups.push(() => w.close());
    const dir = await mkdtemp(join(tmpdir(), "agyb-relay-tls-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, "ca.crt"), tls.cert);
    const relay = await startRelayProcess(["--redis", w.redis.url, "--host", w.host, "--url", w.sim.plainUrl, "--conversation", w.conversationId], dir, {
      NODE_EXTRA_CA_CERTS: join(dir, "ca.crt"),
    });
    cleanups.push(() => relay.kill());
    expect(relay.ready).toEqual({ relay: "ready", host: w.host, redis: `rediss://127.0.0.1:${w.redis.port}` });
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const gate = JSON.parse((await w.waitForEvent((event) => event["type"] === "interaction_requested", "the gate over TLS")).fields["event"]!) as {
      interactionId: string;
    };
    await w.bot.xadd(
      `agy:commands:${w.host}`,
      "*",
      "requestId",
      "tls-1",
      "type",
      "approve",
      "conversationId",
      w.conversationId,
      "interactionId",
      gate.interactionId,
      "body",
      "{}",
      "principal",
      "bot",
    );
    expect((await w.waitForResult("tls-1")).result).toMatchObject({ result: "delivered" });
    expect(await relay.stop()).toBe(0);
  });

  it("refuses a TLS Redis whose certificate it does not trust", async () => {
    const tls = await createSelfSignedCertificate();
    const w = await startRelayWorld({ tls });
    cleanups.push(() => w.close());
    const dir = await mkdtemp(join(tmpdir(), "agyb-relay-tls-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const run = await runRelayOnce(["--redis", w.redis.url, "--host", w.host, "--url", w.sim.plainUrl, "--conversation", w.conversationId], dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot reach Redis at rediss:\/\/127\.0\.0\.1:\d+\/? \(.*certificate.*\)/i);
  });
});
