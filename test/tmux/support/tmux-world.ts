/**
 * One private tmux server per test (`tmux -L agyb-<random>`), with the two
 * programs delivery is tested against: a raw-mode byte logger and the
 * simulator's fake TUI on a steerable port. Setup runs tmux with execFile
 * (argv, no shell) and never through the driver under test. `dispose` kills
 * the server and removes its socket file and the test's temp dir.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { FakePortCall } from "../../support/fake-tui-port.js";
import type { TuiView } from "../../../src/sim/tui/tui-port.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
const LOGGER = join(ROOT, "test/tmux/support/byte-logger.mjs");
const FAKE_TUI = join(ROOT, "test/support/tui-fake-entry.ts");
export const BIN = join(ROOT, "src/cli/bin.ts");

export interface LoggerPane {
  /** `%N` */
  paneId: string;
  /** Everything the program received so far. */
  bytes(): Buffer;
  /** Waits until the log holds `expected` (or more), then returns it. */
  waitForBytes(predicate: (bytes: Buffer) => boolean, what: string): Promise<Buffer>;
}

export interface FakeTuiPane {
  paneId: string;
  setView(patch: Partial<TuiView>): Promise<void>;
  calls(): Promise<FakePortCall[]>;
}

export interface TmuxWorld {
  readonly socketName: string;
  /** A temp dir removed by dispose. */
  readonly dir: string;
  tmux(args: readonly string[], stdin?: string): Promise<string>;
  /** A detached session running argv directly; returns its pane id. Dead panes stay (remain-on-exit). */
  newSession(name: string, argv: readonly string[], options?: { columns?: number; rows?: number; env?: Record<string, string> }): Promise<string>;
  capture(target: string): Promise<string>;
  waitForScreen(target: string, predicate: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** The byte logger; `args` go to it (`--keep-on-enter`: Enter leaves the echo, as a turn that did not start). */
  startLogger(name: string, args?: readonly string[]): Promise<LoggerPane>;
  startFakeTui(name: string, options?: { columns?: number; rows?: number }): Promise<FakeTuiPane>;
  dispose(): Promise<void>;
}

export async function createTmuxWorld(): Promise<TmuxWorld> {
  const socketName = `agyb-${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), "agyb-tmux-"));
  const env = { ...process.env };
  delete env.TMUX;
  let socketPath: string | undefined;
  const tmux = (args: readonly string[], stdin?: string): Promise<string> =>
    new Promise((resolveRun, reject) => {
      const child = execFile("tmux", ["-L", socketName, "-f", "/dev/null", ...args], { env, timeout: 10_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`tmux ${args[0]} failed: ${stderr || error.message}`));
        else resolveRun(stdout);
      });
      if (stdin !== undefined) child.stdin?.end(stdin);
    });
  const waitForScreen = async (target: string, predicate: (screen: string) => boolean, what: string, timeoutMs = 15_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    let screen = "";
    while (Date.now() < deadline) {
      screen = await tmux(["capture-pane", "-p", "-J", "-t", target]);
      if (predicate(screen)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the pane never showed ${what}; last screen:\n${screen}`);
  };
  const world: TmuxWorld = {
    socketName,
    dir,
    tmux,
    async newSession(name, argv, options = {}) {
      const out = await tmux([
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-s",
        name,
        "-x",
        String(options.columns ?? 100),
        "-y",
        String(options.rows ?? 30),
        "-c",
        ROOT,
        ...Object.entries(options.env ?? {}).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
        ...argv,
      ]);
      socketPath ??= (await tmux(["display-message", "-p", "#{socket_path}"])).trim();
      await tmux(["set-option", "-w", "-t", `=${name}:`, "remain-on-exit", "on"]);
      return out.trim();
    },
    capture: (target) => tmux(["capture-pane", "-p", "-J", "-t", target]),
    waitForScreen,
    async startLogger(name, args = []) {
      const log = join(dir, `${name}.bytes`);
      const paneId = await world.newSession(name, [process.execPath, LOGGER, log, ...args]);
      await waitForScreen(paneId, (s) => s.includes("? for shortcuts"), "the byte logger's ready line");
      const bytes = (): Buffer => (existsSync(log) ? readFileSync(log) : Buffer.alloc(0));
      return {
        paneId,
        bytes,
        async waitForBytes(predicate, what) {
          const deadline = Date.now() + 15_000;
          let got = bytes();
          while (Date.now() < deadline) {
            got = bytes();
            if (predicate(got)) return got;
            await new Promise((r) => setTimeout(r, 25));
          }
          throw new Error(`the byte logger never received ${what}; it got ${got.length} bytes: ${JSON.stringify(got.toString("utf8").slice(-200))}`);
        },
      };
    },
    async startFakeTui(name, options = {}) {
      const portFile = join(dir, `${name}.port`);
      const paneId = await world.newSession(name, [process.execPath, "--import", "tsx", FAKE_TUI, portFile], {
        columns: options.columns ?? 90,
        rows: options.rows ?? 30,
      });
      await waitForScreen(paneId, (s) => s.includes("? for shortcuts"), "the fake TUI's idle footer");
      const base = `http://127.0.0.1:${readFileSync(portFile, "utf8")}`;
      return {
        paneId,
        async setView(patch) {
          const body = JSON.stringify(patch, (_key, value: unknown) => (value === undefined ? null : value));
          const res = await fetch(`${base}/view`, { method: "POST", body });
          if (res.status !== 200) throw new Error(`setView answered ${res.status}`);
        },
        async calls() {
          return (await (await fetch(`${base}/calls`)).json()) as FakePortCall[];
        },
      };
    },
    async dispose() {
      await tmux(["kill-server"]).catch(() => undefined);
      if (socketPath !== undefined) rmSync(socketPath, { force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}
