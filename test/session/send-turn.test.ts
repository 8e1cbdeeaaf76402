/**
 * sendTurn through the real tmux driver into the simulator's TUI, running
 * in a private tmux server.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe as group, expect, it } from "vitest";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { AgySession, type AgySessionApi } from "../../src/session/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TOKEN = "5e1d0c2b3a49f8e7d6c5b4a3f2e1d0c9";

let tmux: PrivateTmux | undefined;
let session: AgySessionApi | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
  await tmux?.kill();
  tmux = undefined;
});

async function startAgyInTmux(): Promise<{ tmux: PrivateTmux; url: string }> {
  const t = createPrivateTmux();
  tmux = t;
  await t.newSession("agy", [process.execPath, "--import", "tsx", "src/cli/bin.ts", "sim", "--speed", "0.05", "--csrf_token", TOKEN], {
    cwd: ROOT,
    columns: 160,
    rows: 40,
  });
  const screen = await t.waitForScreen("agy", (s) => /RPC https:\/\/127\.0\.0\.1:\d+ \(TLS\)/.test(s), "the simulator's banner", 20_000);
  const url = /RPC (https:\/\/127\.0\.0\.1:\d+) \(TLS\)/.exec(screen)![1]!;
  return { tmux: t, url };
}

/** Logs every event of the session's first consumer; `waitFor` resolves on the first match. */
function follow(s: AgySessionApi) {
  const log: MapperEvent[] = [];
  void (async () => {
    for await (const e of s.events()) log.push(e);
  })();
  const waitFor = async (match: (e: MapperEvent) => boolean, what: string, ms = 15_000): Promise<MapperEvent> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = log.find(match);
      if (hit !== undefined) return hit;
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; saw ${log.map((e) => e.type).join(", ")}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { log, waitFor };
}

group("typing turns through tmux", () => {
  it("types a turn, verified by its USER_INPUT step, approves the gate and closes the TUI's own prompt", async () => {
    const { tmux: t, url } = await startAgyInTmux();
    // The simulator plays agy 1.0.10, whose leftover dialog Escape closes harmlessly (the key table, spike-notes §5.4).
    session = await AgySession.attach({ url, csrfToken: TOKEN, pane: { target: "=agy", socketName: t.socketName }, agyVersion: "1.0.10" });
    const { log, waitFor } = follow(session);
    const delivered = await session.sendTurn("Run pwd");
    expect(delivered.result).toBe("delivered");
    const gate = (await waitFor((e) => e.type === "interaction_requested", "gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    expect(log.find((e) => e.type === "user_message")).toMatchObject({ text: "Run pwd" });
    const refused = await session.sendTurn("Say hello in one short sentence.");
    expect(refused.result).not.toBe("delivered");
    expect((await session.approve(gate.interactionId)).result).toBe("delivered");
    await waitFor((e) => e.type === "status" && e.status === "idle", "end of the turn");
    // The TUI's own prompt was closed by keys, so the next turn reaches the composer.
    await t.waitForScreen("agy", (s) => !/1\. Yes/.test(s), "the TUI's prompt closed");
    const second = await session.sendTurn("Say hello in one short sentence.");
    expect(second.result).toBe("delivered");
    await waitFor((e) => e.type === "user_message" && e.text === "Say hello in one short sentence.", "second turn");
  }, 60_000);
});
