/**
 * `approve` and `deny` with only `--conversation`: discovery binds the agy
 * that owns the conversation (the simulator running as agy, in a pane of a
 * private tmux server whose socket sits in the user's tmux directory), then
 * finds that agy's pane by pid (spike-notes §2.2) and closes agy's own
 * dialog there with Escape — no `--pane` needed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STEP_STATUS } from "../../src/protocol/wire-names.js";
import { findAgyPane, findServer } from "../../src/discovery/index.js";
import { runMain } from "../support/cli-io.js";
import { BIN, createTmuxWorld, type TmuxWorld } from "../tmux/support/tmux-world.js";

const SERVICE = "exa.language_server_pb.LanguageServerService";
const URL_ON_SCREEN = /http:\/\/127\.0\.0\.1:\d+/;
const TOKEN = "tok-pane-found-4e2b";

let world: TmuxWorld;

beforeEach(async () => {
  world = await createTmuxWorld();
});

afterEach(async () => {
  await world.dispose();
});

async function rpc<T>(url: string, method: string, body: object): Promise<T> {
  const res = await fetch(`${url}/${SERVICE}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-codeium-csrf-token": TOKEN },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** The simulator as agy in a pane, a turn parked on its command dialog; returns the pane, URL and conversation. */
async function agyWaitingOnDialog(): Promise<{ pane: string; url: string; id: string }> {
  const pane = await world.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--csrf_token", TOKEN, "--speed", "0"], {
    columns: 120,
    rows: 40,
    env: { AGY_BRIDGE_CACHE_DIR: world.dir },
  });
  const screen = await world.waitForScreen(pane, (s) => URL_ON_SCREEN.test(s) && /^>\s*$/m.test(s), "the launched sim's TUI", 30_000);
  const url = (URL_ON_SCREEN.exec(screen) as RegExpExecArray)[0];
  const all = await rpc<{ trajectorySummaries?: Record<string, unknown> }>(url, "GetAllCascadeTrajectories", {});
  const [id] = Object.keys(all.trajectorySummaries ?? {});
  if (id === undefined) throw new Error("the simulator hosts no conversation");
  await world.tmux(["send-keys", "-t", pane, "-l", "Run pwd"]);
  await world.tmux(["send-keys", "-t", pane, "Enter"]);
  await world.waitForScreen(pane, (s) => s.includes("4. No"), "the command dialog");
  await expect
    .poll(async () =>
      ((await rpc<{ steps?: Array<{ status?: string }> }>(url, "GetCascadeTrajectorySteps", { cascadeId: id })).steps ?? []).some(
        (s) => s.status === STEP_STATUS.WAITING,
      ),
    )
    .toBe(true);
  return { pane, url, id };
}

describe("the pane of the agy that owns the conversation, found without --pane", () => {
  it("is the pane findAgyPane names for the pid discovery binds, walking up from it to the pane's process", async () => {
    const { pane, id } = await agyWaitingOnDialog();
    const binding = await findServer({ conversationId: id });
    const panePid = Number((await world.tmux(["display-message", "-p", "-t", pane, "#{pane_pid}"])).trim());
    // The bound agy runs below the pane's own process (the launcher), so the lookup has to walk the process tree.
    expect(binding.pid).toBeDefined();
    expect(binding.pid).not.toBe(panePid);
    expect(await findAgyPane(binding.pid!)).toEqual({ target: pane, socketPath: expect.stringContaining(world.socketName) });
  }, 60_000);

  it("approve closes agy's dialog there with Escape, and deny does the same for the next gate", async () => {
    const { pane, id } = await agyWaitingOnDialog();
    const env = { ...process.env, TMUX: undefined };
    const approve = await runMain(["approve", "--conversation", id, "--json"], { env });
    expect([approve.code, approve.stderr]).toEqual([0, ""]);
    expect(JSON.parse(approve.stdout)).toMatchObject({ result: "delivered", prompt: { result: "closed" } });
    const after = await world.waitForScreen(pane, (s) => !s.includes("4. No") && /^>\s*$/m.test(s), "the dialog gone and the composer back");
    expect(after).toContain("/home/sim/project");

    await world.tmux(["send-keys", "-t", pane, "-l", "Delete the build directory"]);
    await world.tmux(["send-keys", "-t", pane, "Enter"]);
    await world.waitForScreen(pane, (s) => s.includes("4. No"), "the next command dialog");
    const deny = await runMain(["deny", "--conversation", id, "--json"], { env });
    expect([deny.code, deny.stderr]).toEqual([0, ""]);
    expect(JSON.parse(deny.stdout)).toMatchObject({ result: "delivered", prompt: { result: "closed" } });
    await world.waitForScreen(pane, (s) => !s.includes("4. No") && /^>\s*$/m.test(s), "the second dialog gone");
  }, 90_000);

  it("answers in agy's dialog with --via tui in the pane it found: deny is Escape, the command never runs", async () => {
    const { pane, id } = await agyWaitingOnDialog();
    const env = { ...process.env, TMUX: undefined };
    const deny = await runMain(["deny", "--conversation", id, "--via", "tui", "--json"], { env });
    expect([deny.code, deny.stderr]).toEqual([0, ""]);
    expect(JSON.parse(deny.stdout)).toMatchObject({ result: "delivered", via: "tui" });
    const after = await world.waitForScreen(
      pane,
      (s) => s.includes("User declined the tool call") && /^>\s*$/m.test(s),
      "the declined call and the composer back",
    );
    expect(after).not.toContain("/home/sim/project");
  }, 60_000);
});
