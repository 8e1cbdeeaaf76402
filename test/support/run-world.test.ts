/**
 * Every world a test starts ends with the run, even when the runner is
 * killed: a runner in miniature (run-world-entry.ts: the run's watchdog, a
 * private tmux server with a simulator in a pane, a headless simulator with
 * the run's environment and one with an environment of its own) is
 * SIGKILLed — no teardown of its own runs — and its tmux server, its socket
 * file and every simulator are gone soon after.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { firstLine } from "./first-line.js";
import { until } from "./until.js";

const ENTRY = resolve(import.meta.dirname, "run-world-entry.ts");

interface Worlds {
  watchdog: number;
  socketPath: string;
  serverPid: number;
  panePid: number;
  marked: number;
  own: number;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("test worlds", () => {
  it("carry the run's mark: a process a test starts inherits AGY_BRIDGE_TEST_RUN, and the run's watchdog watches", () => {
    const child = spawnSync(process.execPath, ["-e", "process.stdout.write(process.env.AGY_BRIDGE_TEST_RUN ?? '')"], { encoding: "utf8" });
    expect(child.stdout).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(existsSync(process.env.AGY_BRIDGE_TEST_RUN_DIR ?? "")).toBe(true);
  });

  it("end with the run when the runner is SIGKILLed: its tmux server, socket and simulators are gone", async () => {
    let stderr = "";
    const runner = spawn(process.execPath, ["--import", "tsx", ENTRY], { stdio: ["ignore", "pipe", "pipe"] });
    runner.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    let worlds: Worlds | undefined;
    onTestFinished(() => {
      // Should the watchdog fail, leave nothing behind for the next test.
      if (runner.exitCode === null) runner.kill("SIGKILL");
      if (worlds !== undefined) {
        spawnSync("tmux", ["-S", worlds.socketPath, "kill-server"], { stdio: "ignore" });
        for (const pid of [worlds.marked, worlds.own, worlds.panePid, worlds.watchdog]) if (isAlive(pid)) process.kill(pid, "SIGKILL");
      }
    });
    worlds = JSON.parse(await firstLine(runner.stdout, "the miniature runner", 90_000, () => stderr)) as Worlds;
    const pids = { tmuxServer: worlds.serverPid, paneSimulator: worlds.panePid, markedSimulator: worlds.marked, ownEnvSimulator: worlds.own };
    for (const [what, pid] of Object.entries(pids)) expect(isAlive(pid), `${what} runs before the kill`).toBe(true);
    expect(existsSync(worlds.socketPath)).toBe(true);

    runner.kill("SIGKILL");
    const w = worlds;
    await until(
      () => {
        const left = Object.entries(pids)
          .filter(([, pid]) => isAlive(pid))
          .map(([what]) => what);
        const socket = existsSync(w.socketPath);
        return left.length === 0 && !socket && !isAlive(w.watchdog) ? true : ((stateOf = { left, socket, watchdog: isAlive(w.watchdog) }), false);
      },
      "every world of the killed run to end",
      { ms: 20_000, everyMs: 100 },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; still there: ${JSON.stringify(stateOf)}`);
    });
    expect(spawnSync("tmux", ["-S", w.socketPath, "has-session"], { stdio: "ignore" }).status).not.toBe(0);
  }, 120_000);
});

let stateOf: unknown;
