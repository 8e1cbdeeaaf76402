/**
 * A test runner in miniature, for test/support/run-world.test.ts: it starts
 * the run's watchdog as vitest's globalSetup does, then worlds the way tests
 * start them — a private tmux server with a simulator in a pane
 * (`createPrivateTmux`), a headless simulator child carrying the run's
 * environment, and one started with an environment of its own — prints one
 * JSON line with their pids and the tmux socket, and waits to be killed.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { startRunWatchdog } from "./run-world.js";
import { createPrivateTmux } from "./tmux-server.js";
import { firstLine } from "./first-line.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

const watchdog = await startRunWatchdog();
const tmux = createPrivateTmux();
await tmux.newSession("w", [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0"], { cwd: ROOT });
await tmux.waitForScreen("w", (s) => s.includes("? for shortcuts"), "the simulator in its pane", 40_000);
const panePid = Number((await tmux.run(["display-message", "-p", "-t", "w", "#{pane_pid}"])).trim());
const serverPid = Number((await tmux.run(["display-message", "-p", "#{pid}"])).trim());

function headless(env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "sim", "--headless", "--speed", "0"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "ignore"] });
  return firstLine(child.stdout, "a headless simulator", 40_000).then(() => child.pid as number);
}

const marked = await headless(process.env);
const own = await headless({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" });
process.stdout.write(`${JSON.stringify({ watchdog: watchdog.pid, socketPath: tmux.socketPath, serverPid, panePid, marked, own })}\n`);
setInterval(() => undefined, 60_000);
