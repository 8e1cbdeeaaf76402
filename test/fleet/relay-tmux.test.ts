/**
 * The relay as a person runs it on a host: the simulator playing agy with its
 * TUI in a private tmux server, the relay finding it from its pane, a bot
 * typing a turn and answering its gate through Redis.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFleetClient, SESSIONS_STREAM } from "../../src/fleet/index.js";
import { createPrivateTmux } from "../support/tmux-server.js";
import { startRedis } from "./support/redis-process.js";
import { startRelayProcess } from "./support/relay-process.js";
import { asEntries } from "./support/relay-world.js";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe("a relay over agy in tmux", { timeout: 90_000 }, () => {
  it("types a turn a bot sent and delivers the bot's approval of its gate", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const tmux = createPrivateTmux();
    cleanups.push(() => tmux.kill());
    await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy"], { columns: 120, rows: 40, cwd: ROOT });
    await tmux.waitForScreen("agy", (s) => /\? for shortcuts|esc to interrupt/i.test(s) || s.includes("─────"), "the simulator's TUI", 30_000);
    const pane = (await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_id}"])).trim();
    const dir = await mkdtemp(join(tmpdir(), "agyb-relay-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const relay = await startRelayProcess(["--redis", redis.url, "--host", "tmux-host", "--pane", pane, "-L", tmux.socketName], dir);
    cleanups.push(() => relay.kill());

    const bot = redis.client();
    const attached = await until(
      async () => asEntries((await bot.xrange(SESSIONS_STREAM, "-", "+")) as [string, string[]][]).find((e) => e.fields["type"] === "session.attached"),
      "the session in the index",
      { ms: 30_000, seen: () => relay.stderr() },
    );
    const conversationId = attached.fields["conversationId"]!;
    const client = createFleetClient({ redis: bot, blockMs: 100 });

    const turn = await client.command("tmux-host", { type: "send_turn", conversationId, body: { text: "Run pwd" }, principal: "bot" }, { timeoutMs: 30_000 });
    expect(turn.result["result"]).toBe("delivered");
    const stop = new AbortController();
    cleanups.push(async () => stop.abort());
    let gate: { interactionId: string; stepIndex: number } | undefined;
    for await (const { event } of client.events("tmux-host", conversationId, { signal: AbortSignal.any([stop.signal, AbortSignal.timeout(30_000)]) })) {
      if (event.type === "user_message") expect(event.text).toBe("Run pwd");
      if (event.type === "interaction_requested") {
        gate = event;
        break;
      }
    }
    if (gate === undefined) throw new Error(`no gate was published within 30 s; relay stderr: ${relay.stderr()}`);
    const approval = await client.command(
      "tmux-host",
      { type: "approve", conversationId, interactionId: gate.interactionId, principal: "bot" },
      { timeoutMs: 30_000 },
    );
    expect(approval.result).toMatchObject({ result: "delivered", interactionId: gate.interactionId, stepIndex: gate.stepIndex });
    // The TUI's own prompt was closed after the RPC answer (the pane is known).
    expect(approval.result["prompt"]).toMatchObject({ result: expect.any(String) });
    expect(await relay.stop()).toBe(0);
  });
});
