import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startRelayProcess } from "./support/relay-process.js";
import { startRelayWorld } from "./support/relay-world.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe("stopping the relay", { timeout: 60_000 }, () => {
  it("exits 0 on SIGTERM even while Redis is away with events waiting", async () => {
    const w = await startRelayWorld();
    cleanups.push(() => w.close());
    const dir = await mkdtemp(join(tmpdir(), "agyb-relay-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const relay = await startRelayProcess(["--redis", w.redis.url, "--host", w.host, "--url", w.sim.plainUrl, "--conversation", w.conversationId], dir);
    cleanups.push(() => relay.kill());
    await w.redis.kill();
    // Events the relay cannot write: a turn that runs into its gate.
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const watcher = await w.session();
    for await (const event of watcher.events({ history: false })) if (event.type === "interaction_requested") break;
    // stop() sends SIGTERM and falls back to SIGKILL after 10 s (exit code null).
    expect(await relay.stop()).toBe(0);
    expect(relay.stderr()).toContain("shutting down");
  });
});
