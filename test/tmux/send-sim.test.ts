/**
 * `agy-bridge send` against `agy-bridge sim` (real engine and language
 * server, its TUI in a real tmux pane): the turn confirmed by a new
 * USER_INPUT step over RPC, refused while a step is WAITING, and agy's
 * leftover dialog of an answered step closed only with a key the key table
 * marks safe — here none, so only with --close-stale (spike-notes §5.4,
 * §6.2, §13).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RUN_STATUS, STEP_STATUS, STEP_TYPE } from "../../src/protocol/wire-names.js";
import { readScreen } from "../../src/tmux/index.js";
import { runCli } from "./support/run-cli.js";
import { BIN, createTmuxWorld, type TmuxWorld } from "./support/tmux-world.js";

const SERVICE = "exa.language_server_pb.LanguageServerService";

interface Step {
  type?: string;
  status?: string;
  userInput?: { userResponse?: string };
}

let world: TmuxWorld;
let pane: string;
let url: string;

async function rpc<T>(method: string, body: object): Promise<T> {
  const res = await fetch(`${url}/${SERVICE}/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function conversation(): Promise<{ id: string; trajectoryId: string }> {
  const all = await rpc<{ trajectorySummaries?: Record<string, { trajectoryId: string }> }>("GetAllCascadeTrajectories", {});
  const [entry] = Object.entries(all.trajectorySummaries ?? {});
  if (entry === undefined) throw new Error("the simulator hosts no conversation");
  return { id: entry[0], trajectoryId: entry[1].trajectoryId };
}

const steps = async (id: string): Promise<Step[]> => (await rpc<{ steps?: Step[] }>("GetCascadeTrajectorySteps", { cascadeId: id })).steps ?? [];
const userInputs = async (id: string): Promise<(string | undefined)[]> =>
  (await steps(id)).filter((s) => s.type === STEP_TYPE.USER_INPUT).map((s) => s.userInput?.userResponse);

const send = (id: string, ...rest: string[]) => runCli(["send", "--pane", pane, "-L", world.socketName, "--url", url, "--conversation", id, "--json", ...rest]);

beforeEach(async () => {
  world = await createTmuxWorld();
});

afterEach(async () => {
  await world.dispose();
});

describe("send to agy-bridge sim with an RPC client bound", () => {
  beforeEach(async () => {
    pane = await world.newSession("sim", [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0"], { columns: 110, rows: 40 });
    const screen = await world.waitForScreen(pane, (s) => s.includes("? for shortcuts") && /http:\/\/127\.0\.0\.1:\d+/.test(s), "the sim's idle TUI", 30_000);
    url = (/http:\/\/127\.0\.0\.1:\d+/.exec(screen) as RegExpExecArray)[0];
  });

  it("confirms a multi-line turn by the one new USER_INPUT step it creates", async () => {
    const { id } = await conversation();
    const text = "Say hello in one short sentence.\nSecond line of the same turn.";
    const cli = await send(id, "--", text);
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ result: "delivered", reason: "The turn started: a new USER_INPUT step appeared after Enter." });
    expect(await userInputs(id)).toEqual([text]);
  });

  it("refuses while a permission step is WAITING and types nothing into its prompt", async () => {
    const { id } = await conversation();
    expect((await send(id, "--", "Run pwd")).code).toBe(0);
    await expect.poll(async () => (await steps(id)).some((s) => s.status === STEP_STATUS.WAITING)).toBe(true);
    const refused = await send(id, "--", "Another turn");
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ result: "failed", reason: expect.stringContaining("WAITING") });
    expect(readScreen(await world.capture(pane))).toMatchObject({ state: "prompt", composer: "absent", prompt: { kind: "command" } });
    expect(await userInputs(id)).toEqual(["Run pwd"]);
    expect((await steps(id)).some((s) => s.status === STEP_STATUS.WAITING)).toBe(true);
  });

  it("leaves the leftover dialog of a step answered over RPC where no key is known safe (version unknown), until --close-stale", async () => {
    const { id, trajectoryId } = await conversation();
    expect((await send(id, "--", "Run pwd")).code).toBe(0);
    let stepIndex = -1;
    await expect.poll(async () => (stepIndex = (await steps(id)).findIndex((s) => s.status === STEP_STATUS.WAITING))).toBeGreaterThanOrEqual(0);
    await world.waitForScreen(pane, (s) => s.includes("4. No"), "the permission prompt");
    await rpc("HandleCascadeUserInteraction", { cascadeId: id, interaction: { trajectoryId, stepIndex, permission: { allow: true } } });
    await expect
      .poll(
        async () =>
          (await rpc<{ trajectorySummaries?: Record<string, { status?: string }> }>("GetAllCascadeTrajectories", {})).trajectorySummaries?.[id]?.status,
        { timeout: 15_000 },
      )
      .toBe(RUN_STATUS.IDLE);

    // agy's own dialog is still open (spike-notes §5.4). This simulator names no agy version, so the key table's
    // conservative row applies: no key is known to close a settled step's dialog safely, and send refuses, typing nothing.
    await world.waitForScreen(pane, (s) => s.includes("4. No"), "the leftover dialog");
    const refused = await send(id, "--", "Thanks");
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ result: "failed", reason: expect.stringContaining("--close-stale") });
    expect(readScreen(await world.capture(pane))).toMatchObject({ state: "prompt", prompt: { kind: "command" } });
    expect(await userInputs(id)).toEqual(["Run pwd"]);
    // The person's explicit choice: Escape closes it, then the turn goes in.
    const next = await send(id, "--close-stale", "--", "Thanks");
    expect(JSON.parse(next.stdout)).toMatchObject({ result: "delivered" });
    expect(await userInputs(id)).toEqual(["Run pwd", "Thanks"]);
  });
});

describe("send to agy 1.2.x (the version read from the pane's banner)", () => {
  it("refuses, pressing nothing, to close a leftover approval with Escape — it would end the resumed turn — until --close-stale", async () => {
    pane = await world.newSession(
      "sim",
      [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0", "--tui-version", "1.2.10", "--tui-stale-dialog", "stay"],
      { columns: 110, rows: 40 },
    );
    const screen = await world.waitForScreen(
      pane,
      (s) => s.includes("Antigravity CLI 1.2.10") && /http:\/\/127\.0\.0\.1:\d+/.test(s),
      "the sim's 1.2.10 TUI",
      30_000,
    );
    url = (/http:\/\/127\.0\.0\.1:\d+/.exec(screen) as RegExpExecArray)[0];
    const { id, trajectoryId } = await conversation();
    expect((await send(id, "--", "Run pwd")).code).toBe(0);
    let stepIndex = -1;
    await expect.poll(async () => (stepIndex = (await steps(id)).findIndex((s) => s.status === STEP_STATUS.WAITING))).toBeGreaterThanOrEqual(0);
    await world.waitForScreen(pane, (s) => s.includes("4. No, cancel"), "the 1.2 command dialog");
    await rpc("HandleCascadeUserInteraction", { cascadeId: id, interaction: { trajectoryId, stepIndex, permission: { allow: true } } });
    await expect.poll(async () => (await steps(id)).some((s) => s.status === STEP_STATUS.WAITING), { timeout: 15_000 }).toBe(false);

    const refused = await send(id, "--", "2 more checks");
    expect(refused.code).toBe(1);
    const reason = (JSON.parse(refused.stdout) as { reason: string }).reason;
    expect(reason).toContain("agy 1.2.10");
    expect(reason).toContain("Escape would cancel the tool call and end agy's turn");
    expect(reason).toContain("--close-stale");
    expect(readScreen(await world.capture(pane))).toMatchObject({ state: "prompt", prompt: { kind: "command" } });
    expect(await userInputs(id)).toEqual(["Run pwd"]);

    const closed = await send(id, "--close-stale", "--", "2 more checks");
    expect(JSON.parse(closed.stdout)).toMatchObject({ result: "delivered" });
    expect(await userInputs(id)).toEqual(["Run pwd", "2 more checks"]);
  }, 60_000);
});

describe("send with --conversation and no --url", () => {
  it("finds the server by discovery (the agy in the pane, CSRF token included) and confirms the turn", async () => {
    const token = "tok-send-7f3a";
    const agy = await world.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--csrf_token", token, "--speed", "0"], {
      env: { AGY_BRIDGE_CACHE_DIR: world.dir },
    });
    const screen = await world.waitForScreen(
      agy,
      (s) => s.includes("? for shortcuts") && /http:\/\/127\.0\.0\.1:\d+/.test(s),
      "the launched sim's TUI",
      30_000,
    );
    const agyUrl = (/http:\/\/127\.0\.0\.1:\d+/.exec(screen) as RegExpExecArray)[0];
    const all = await fetch(`${agyUrl}/${SERVICE}/GetAllCascadeTrajectories`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-codeium-csrf-token": token },
      body: "{}",
    });
    const [id] = Object.keys(((await all.json()) as { trajectorySummaries: Record<string, unknown> }).trajectorySummaries);
    const cli = await runCli(["send", "--pane", "=agy", "-L", world.socketName, "--conversation", id as string, "--json", "--", "Say hello"]);
    expect(cli.stderr).toBe("");
    expect(JSON.parse(cli.stdout)).toEqual({ result: "delivered", reason: "The turn started: a new USER_INPUT step appeared after Enter." });
    expect(cli.code).toBe(0);
  }, 60_000);
});
