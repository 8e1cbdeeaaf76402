/**
 * `waitingFor: "background_task"` end to end: the simulator as agy 1.2 in a
 * real tmux pane on a private server, its status row showing `· N task(s) ·
 * /tasks` (`--tui-tasks`, spike-notes §13 #26), attached with AgySession and
 * that pane; the session reads the row through the real tmux driver.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgySession, type AgySessionApi } from "../../src/session/index.js";
import { defaultTurnDriver } from "../../src/session/session-effects.js";
import type { TurnDriver } from "../../src/session/types.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const TOKEN = "tok-bg-tasks-7a1c";
const URL_ON_SCREEN = /http:\/\/127\.0\.0\.1:\d+/;

let tmux: PrivateTmux;
let cacheDir: string;
let session: AgySessionApi | undefined;
let count = 0;

beforeAll(() => {
  tmux = createPrivateTmux();
  cacheDir = mkdtempSync(join(tmpdir(), "agy-bg-tasks-"));
});

afterEach(async () => {
  await session?.close();
  session = undefined;
});

afterAll(async () => {
  await tmux.kill();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** `sim --as-agy` playing agy 1.2 in its own tmux session; its plain URL and pane id. */
async function agyInPane(flags: string[]): Promise<{ url: string; pane: string; name: string }> {
  count += 1;
  const name = `bg-${count}`;
  await tmux.newSession(
    name,
    [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--tui-version", "1.2", "--csrf_token", TOKEN, "--speed", "0", ...flags],
    {
      cwd: ROOT,
      columns: 120,
      rows: 40,
      env: { AGY_BRIDGE_CACHE_DIR: cacheDir },
    },
  );
  const screen = await tmux.waitForScreen(`${name}:`, (s) => URL_ON_SCREEN.test(s) && s.includes("? for shortcuts"), "the simulated agy's idle TUI", 30_000);
  const pane = (await tmux.run(["display-message", "-p", "-t", `${name}:`, "#{pane_id}"])).trim();
  return { url: (URL_ON_SCREEN.exec(screen) as RegExpExecArray)[0], pane, name };
}

/** The real tmux driver, counting the screen readings the session makes. */
async function countingDriver(): Promise<{ driver: TurnDriver; reads: () => number }> {
  const real = await defaultTurnDriver();
  let reads = 0;
  const driver: TurnDriver = {
    deliverTurn: (pane, text, options) => real.deliverTurn(pane, text, options),
    closePrompt: (pane, options) => real.closePrompt(pane, options),
    answerPrompt: (pane, choice, options) => real.answerPrompt(pane, choice, options),
    readScreen: (pane, options) => {
      reads += 1;
      return real.readScreen!(pane, options);
    },
  };
  return { driver, reads: () => reads };
}

async function attach(url: string, pane: string, driver: TurnDriver): Promise<{ log: MapperEvent[]; statuses: () => string[] }> {
  session = await AgySession.attach({
    url,
    csrfToken: TOKEN,
    pane: { target: pane, socketName: tmux.socketName },
    turnDriver: driver,
    agyVersion: "1.2.10",
    backgroundTasks: { intervalMs: 100 },
  });
  const log: MapperEvent[] = [];
  const s = session;
  void (async () => {
    for await (const e of s.events()) log.push(e);
  })();
  const statuses = () => log.flatMap((e) => (e.type === "status" ? [`${e.status}/${e.reason}${e.waitingFor === undefined ? "" : `/${e.waitingFor}`}`] : []));
  return { log, statuses };
}

describe("background tasks on agy's status row", () => {
  it("makes the idle session wait for a background_task, once, and again after a turn", async () => {
    const agy = await agyInPane(["--tui-tasks", "1"]);
    const { driver, reads } = await countingDriver();
    const { log, statuses } = await attach(agy.url, agy.pane, driver);
    const seen = () => `${statuses().join(", ")} after ${reads()} readings`;
    await until(() => statuses().length > 0, "a status edge", { seen });
    expect(log.find((e) => e.type === "status")).toEqual({
      type: "status",
      conversationId: session!.conversationId,
      status: "waiting",
      reason: "background_task_running",
      waitingFor: "background_task",
    });
    // More readings of the same row make no second edge.
    const after = reads();
    await until(() => reads() >= after + 3, "three more readings", { seen });
    expect(statuses()).toEqual(["waiting/background_task_running/background_task"]);
    expect((await session!.screen()).backgroundTasks).toBe(1);

    // A turn is the wire's business; once it is over the task still shows.
    expect((await session!.sendTurn("Say hello in one short sentence.")).result).toBe("delivered");
    await until(() => statuses().length >= 4, "the turn and the wait after it", { seen, ms: 30_000 });
    expect(statuses()).toEqual([
      "waiting/background_task_running/background_task",
      "running/turn_started",
      "idle/turn_completed",
      "waiting/background_task_running/background_task",
    ]);
  }, 90_000);

  it("stays idle when the row shows no task", async () => {
    const agy = await agyInPane([]);
    const { driver, reads } = await countingDriver();
    const { statuses } = await attach(agy.url, agy.pane, driver);
    expect((await session!.sendTurn("Say hello in one short sentence.")).result).toBe("delivered");
    const seen = () => `${statuses().join(", ")} after ${reads()} readings`;
    await until(() => statuses().includes("idle/turn_completed"), "the end of the turn", { seen, ms: 30_000 });
    const after = reads();
    await until(() => reads() >= after + 3, "three readings of the idle row", { seen });
    expect(statuses()).toEqual(["running/turn_started", "idle/turn_completed"]);
  }, 90_000);

  it("says the pane is gone when it vanishes, and the session goes on", async () => {
    const agy = await agyInPane(["--tui-tasks", "1"]);
    // A pane that is not agy's and that the test closes: agy itself stays up.
    const other = `other-${count}`;
    await tmux.newSession(other, ["cat"]);
    const otherPane = (await tmux.run(["display-message", "-p", "-t", `${other}:`, "#{pane_id}"])).trim();
    const { driver, reads } = await countingDriver();
    const { log } = await attach(agy.url, otherPane, driver);
    await until(() => reads() > 0, "a reading of the pane");
    await tmux.run(["kill-session", "-t", other]);
    const gone = await until(() => log.find((e) => e.type === "diagnostic" && e.code === "pane_gone"), "a pane_gone diagnostic", {
      seen: () => JSON.stringify(log.map((e) => e.type)),
    });
    expect(gone).toMatchObject({ message: expect.stringContaining("agy's tmux pane is gone") });
    expect(log.some((e) => e.type === "status")).toBe(false);
    // Still following agy over RPC.
    expect(await session!.pending()).toEqual([]);
  }, 90_000);
});
