/**
 * Every world a test starts ends with the run, even when the runner is
 * killed (Ctrl-C, a CI timeout, SIGKILL): otherwise the tests' tmux servers
 * and simulators stay behind and discovery lists them as agy sessions.
 *
 * One watchdog per run (run-watchdog.mjs), started by vitest's globalSetup
 * (global-setup.ts) before any test: a detached process in a session of its
 * own (so the terminal's Ctrl-C does not reach it) reading a pipe from the
 * runner. The run marks its environment with `AGY_BRIDGE_TEST_RUN=<id>`, so
 * every process a test starts carries the mark; private tmux servers are
 * registered by `createPrivateTmux` (tmux-server.ts). When the pipe closes —
 * the run's teardown closes it, and so does the kernel when the runner dies
 * — the watchdog kills every registered tmux server and every marked or
 * descended process, then exits. Tests that start worlds through
 * test/support get this for free.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const RUN_ENV = "AGY_BRIDGE_TEST_RUN";
export const RUN_DIR_ENV = "AGY_BRIDGE_TEST_RUN_DIR";

const WATCHDOG = fileURLToPath(new URL("./run-watchdog.mjs", import.meta.url));

export interface RunWatchdog {
  readonly id: string;
  readonly pid: number;
  /** Ends the run's worlds now and resolves when the watchdog is done (bounded). */
  end(): Promise<void>;
}

/**
 * Marks this process's environment with a fresh run id (a nested run gets
 * its own, never its parent's) and starts the run's watchdog; resolves once
 * it watches.
 */
export async function startRunWatchdog(): Promise<RunWatchdog> {
  const id = randomUUID();
  const dir = mkdtempSync(join(tmpdir(), "agyb-run-"));
  process.env[RUN_ENV] = id;
  process.env[RUN_DIR_ENV] = dir;
  const child = spawn(process.execPath, [WATCHDOG, id, dir, String(process.pid)], { detached: true, stdio: ["pipe", "pipe", "ignore"] });
  const pid = child.pid;
  if (pid === undefined) throw new Error("the test run's watchdog did not start");
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the test run's watchdog did not say it watches within 10 s (it said ${JSON.stringify(out)})`)), 10_000);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("watching\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the test run's watchdog exited (${code}) before it watched`));
    });
  });
  child.stdout.destroy();
  // Neither the watchdog nor its pipe keeps the runner alive: the pipe closes when the runner ends, however it ends.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    id,
    pid,
    async end() {
      child.stdin.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000)))]);
      clearTimeout(timer);
    },
  };
}

/** Registers a private tmux server's socket with the run's watchdog, which kills the server when the run ends. */
export function registerTmuxSocket(socketPath: string): void {
  const dir = process.env[RUN_DIR_ENV];
  if (dir === undefined || dir === "") return;
  try {
    appendFileSync(join(dir, "tmux-sockets"), `${socketPath}\n`);
  } catch {
    // The run is ending (its directory is gone): the test's own teardown still kills the server.
  }
}
