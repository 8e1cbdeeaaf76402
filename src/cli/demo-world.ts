/**
 * The demo's world: a private tmux server (`tmux -L agy-bridge-demo-<random>`)
 * whose one pane runs `agy-bridge sim --as-agy` with its TUI, started with an
 * argv (tmux runs a multi-word command directly, no shell). Closing it ends
 * every process it started and removes the server's socket file.
 */
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { AgyBridgeError } from "../errors.js";
import { createTmuxDriver, spawnTmux, type TmuxDriver } from "../tmux/index.js";
import { processesOfTmuxServer, processTree, readParentTable, stillAlive, type ParentTable } from "./demo-processes.js";

/** How to start this CLI again, in the pane. */
export interface DemoSelf {
  node: string;
  /** Node flags and the CLI script, e.g. `["--import", "tsx", "/…/src/cli/bin.ts"]`. */
  args: string[];
  cwd: string;
}

export interface DemoWorldOptions {
  self: DemoSelf;
  /** Extra `agy-bridge sim` arguments after `--as-agy`. */
  simArgs?: readonly string[];
  columns?: number;
  rows?: number;
  parents?: ParentTable;
}

/** What closing the world found and did. */
export interface CleanupReport {
  /** Processes of the pane's tree that ended. */
  ended: number;
  /** Processes still alive after SIGTERM and SIGKILL (should be none). */
  leftover: number[];
  socketRemoved: boolean;
}

export interface DemoWorld {
  readonly socketName: string;
  /** The server's socket file, removed on close. */
  readonly socketPath: string;
  /** The pane running the simulator (`%N`). */
  readonly target: string;
  /** The pane's process (the simulator's node, parent of the `bin/agy` launcher). */
  readonly panePid: number;
  readonly driver: TmuxDriver;
  /** Remembers the pane's process tree now, so processes that later lose their parent are still ended. */
  noteProcesses(): Promise<number[]>;
  /** Whether the pane's program has exited, and its last screen line. */
  paneState(): Promise<{ dead: boolean; lastLine: string }>;
  close(): Promise<CleanupReport>;
}

/** The CLI as this process runs it: node, its flags (tsx's loader when run from src), the script. */
export function currentSelf(): DemoSelf {
  const script = process.argv[1];
  if (script === undefined) throw new AgyBridgeError("internal", "cannot tell which script runs agy-bridge; start the demo as `agy-bridge demo`");
  // The real path, not an npm bin link ending in `bin/agy-bridge` (discovery matches `bin/agy`).
  return { node: process.execPath, args: [...process.execArgv, realpathSync(script)], cwd: process.cwd() };
}

/** Starts the private tmux server with the simulator in its pane. */
export async function startDemoWorld(options: DemoWorldOptions): Promise<DemoWorld> {
  const socketName = `agy-bridge-demo-${randomBytes(6).toString("hex")}`;
  const driver = createTmuxDriver({ socket: { name: socketName } });
  const argv = [options.self.node, ...options.self.args, "sim", "--as-agy", ...(options.simArgs ?? [])];
  // -f /dev/null: the person's tmux.conf must not change the demo's pane (size, keys, default command).
  const started = await spawnTmux(
    "tmux",
    [
      "-L",
      socketName,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-P",
      "-F",
      "#{pane_id} #{pane_pid} #{socket_path}",
      "-s",
      "agy",
      "-x",
      String(options.columns ?? 100),
      "-y",
      String(options.rows ?? 32),
      "-c",
      options.self.cwd,
      ...argv,
    ],
    { timeoutMs: 10_000 },
  );
  const match = /^(%[0-9]+) ([0-9]+) (.+)$/.exec(started.stdout.trim());
  if (started.code !== 0 || match === null) {
    const said = started.stderr.trim().split("\n")[0] || "no message";
    throw new AgyBridgeError("internal", `could not start a private tmux server for the demo (tmux said: ${said}); check that tmux works`);
  }
  const [, target, pid, socketPath] = match as unknown as [string, string, string, string];
  const panePid = Number(pid);
  const parents = options.parents ?? readParentTable;
  const known = new Set<number>([panePid]);
  const noteProcesses = async (): Promise<number[]> => {
    for (const p of await processTree(panePid, parents)) known.add(p);
    return [...known];
  };
  // A crash stays on screen, so a failure can say what the simulator printed.
  await driver.run(["set-option", "-t", target, "remain-on-exit", "on"]).catch(() => undefined);
  await noteProcesses();

  let closed: Promise<CleanupReport> | undefined;
  return {
    socketName,
    socketPath,
    target,
    panePid,
    driver,
    noteProcesses,
    async paneState() {
      const info = await driver.paneInfo(target);
      const screen = await driver.capturePane(target).catch(() => "");
      // remain-on-exit adds tmux's own "Pane is dead (status N, …)" line: the program's last words come before it.
      const lines = screen
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "" && !l.startsWith("Pane is dead"));
      return { dead: info.dead, lastLine: lines.at(-1) ?? "" };
    },
    close() {
      closed ??= closeWorld(driver, panePid, socketPath, noteProcesses);
      return closed;
    },
  };
}

async function closeWorld(driver: TmuxDriver, panePid: number, socketPath: string, noteProcesses: () => Promise<number[]>): Promise<CleanupReport> {
  let pids = await noteProcesses().catch(() => [] as number[]);
  // SIGTERM first: the simulator's node stops its launcher, which ends its own children.
  signalAll([panePid], "SIGTERM");
  const deadline = Date.now() + GRACE_MS;
  let alive = await stillAlive(pids);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(50);
    // The tree may still grow (a launcher spawned just now) while the pane's process lives.
    pids = await noteProcesses().catch(() => pids);
    alive = await stillAlive(pids);
  }
  await driver.run(["kill-server"]).catch(() => undefined);
  const strays = await processesOfTmuxServer(socketPath);
  pids = [...new Set([...pids, ...strays])];
  alive = await stillAlive(pids);
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    if (alive.length === 0) break;
    signalAll(alive, signal);
    alive = await waitGone(alive, 2_000);
  }
  rmSync(socketPath, { force: true });
  return { ended: pids.length - alive.length, leftover: alive, socketRemoved: !existsSync(socketPath) };
}

/** How long the simulator gets to stop by itself before tmux hangs up on it. */
const GRACE_MS = 5_000;

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

async function waitGone(pids: readonly number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = await stillAlive(pids);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(50);
    alive = await stillAlive(alive);
  }
  return alive;
}
