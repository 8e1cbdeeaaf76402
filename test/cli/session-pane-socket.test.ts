/**
 * The session commands and `sessions` reaching agy's pane on a private tmux
 * server with `-L` (the simulator running as agy in its own tmux server):
 * an approval given with `--pane … -L …` closes the TUI's own prompt with its
 * keys (spike-notes §5.4, §5.6), and `sessions -L` matches the pane.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STEP_STATUS } from "../../src/protocol/wire-names.js";
import { runMain } from "../support/cli-io.js";
import { BIN, createTmuxWorld, type TmuxWorld } from "../tmux/support/tmux-world.js";

const SERVICE = "exa.language_server_pb.LanguageServerService";
const URL_ON_SCREEN = /http:\/\/127\.0\.0\.1:\d+/;

let world: TmuxWorld;

beforeEach(async () => {
  world = await createTmuxWorld();
});

afterEach(async () => {
  await world.dispose();
});

async function rpc<T>(url: string, method: string, body: object, token?: string): Promise<T> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers["x-codeium-csrf-token"] = token;
  const res = await fetch(`${url}/${SERVICE}/${method}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function onlyConversation(url: string, token?: string): Promise<string> {
  const all = await rpc<{ trajectorySummaries?: Record<string, unknown> }>(url, "GetAllCascadeTrajectories", {}, token);
  const [id] = Object.keys(all.trajectorySummaries ?? {});
  if (id === undefined) throw new Error("the simulator hosts no conversation");
  return id;
}

describe("--pane with -L on the session commands", () => {
  it("approves over RPC and closes the TUI's own prompt, so the next send is not refused", async () => {
    // `--tui-version 1.0.10` puts agy's version in the banner, so the commands choose agy 1.0.x's keys (Escape closes a leftover dialog, spike-notes §5.4).
    const pane = await world.newSession("sim", [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0", "--tui-version", "1.0.10"], {
      columns: 110,
      rows: 40,
    });
    const screen = await world.waitForScreen(pane, (s) => s.includes("? for shortcuts") && URL_ON_SCREEN.test(s), "the sim's idle TUI", 30_000);
    const url = (URL_ON_SCREEN.exec(screen) as RegExpExecArray)[0];
    const id = await onlyConversation(url);
    const conn = ["--url", url, "--conversation", id];
    const env = { ...process.env, TMUX: undefined };

    const first = await runMain(["send", "--pane", pane, "-L", world.socketName, ...conn, "--json", "--", "Run pwd"], { env });
    expect(JSON.parse(first.stdout)).toMatchObject({ result: "delivered" });
    await expect
      .poll(async () =>
        ((await rpc<{ steps?: Array<{ status?: string }> }>(url, "GetCascadeTrajectorySteps", { cascadeId: id })).steps ?? []).some(
          (s) => s.status === STEP_STATUS.WAITING,
        ),
      )
      .toBe(true);
    await world.waitForScreen(pane, (s) => s.includes("4. No"), "the permission prompt");

    const approve = await runMain(["approve", ...conn, "--pane", pane, "-L", world.socketName, "--json"], { env });
    expect([approve.code, approve.stderr]).toEqual([0, ""]);
    expect(JSON.parse(approve.stdout)).toMatchObject({ result: "delivered", prompt: { result: "closed" } });
    await world.waitForScreen(pane, (s) => !s.includes("4. No") && s.includes("? for shortcuts"), "the TUI's prompt closing and the turn ending");

    const next = await runMain(["send", "--pane", pane, "-L", world.socketName, ...conn, "--json", "--", "Thanks"], { env });
    expect(JSON.parse(next.stdout)).toMatchObject({ result: "delivered" });
  }, 60_000);

  it("refuses -L without --pane, and both -L and -S, as usage errors", async () => {
    for (const command of ["approve", "deny", "answer", "interrupt", "watch"]) {
      const alone = await runMain([command, "--url", "http://127.0.0.1:9", "--conversation", "c", "-L", "x"]);
      expect([command, alone.code, alone.stderr]).toEqual([
        command,
        2,
        expect.stringMatching(new RegExp(`^agy-bridge ${command}: -L and -S choose the tmux server of --pane`)),
      ]);
      const both = await runMain([command, "--url", "http://127.0.0.1:9", "--conversation", "c", "--pane", "%0", "-L", "x", "-S", "/tmp/x"]);
      expect([command, both.code, both.stderr]).toEqual([command, 2, expect.stringContaining("give -L or -S, not both")]);
    }
  });
});

describe("sessions -L", () => {
  it("fills tmuxPane for an agy on a private tmux server only when told which server", async () => {
    const token = "tok-sessions-9c1d";
    const pane = await world.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--csrf_token", token, "--speed", "0"], {
      env: { AGY_BRIDGE_CACHE_DIR: world.dir },
    });
    const screen = await world.waitForScreen(pane, (s) => s.includes("? for shortcuts") && URL_ON_SCREEN.test(s), "the launched sim's TUI", 30_000);
    const id = await onlyConversation((URL_ON_SCREEN.exec(screen) as RegExpExecArray)[0], token);
    const entryOf = async (argv: string[]) => {
      const run = await runMain(["sessions", "--json", ...argv]);
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain(token);
      const entries = JSON.parse(run.stdout) as Array<{ tmuxPane?: string; conversations: Array<{ conversationId: string }> }>;
      return entries.find((e) => e.conversations.some((c) => c.conversationId === id));
    };
    expect(await entryOf(["-L", world.socketName])).toMatchObject({ tmuxPane: pane });
    const unscoped = await entryOf([]);
    expect(unscoped).toMatchObject({ conversations: expect.any(Array) });
    expect(unscoped?.tmuxPane).toBeUndefined();
  }, 60_000);
});
