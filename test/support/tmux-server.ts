/**
 * A private tmux server for tests (`tmux -L agyb-<unique>`), always killed by
 * the test's afterAll, which also removes its socket file (tmux leaves it
 * behind in `$TMUX_TMPDIR/tmux-<uid>/`) — and registered with the run's
 * watchdog (run-world.ts), which kills it when the run ends however it ends.
 * Commands are spawned with argv, never through a shell.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { registerTmuxSocket } from "./run-world.js";

export interface PrivateTmux {
  readonly socketName: string;
  /** Where tmux puts this server's socket (`$TMUX_TMPDIR` or /tmp, then `tmux-<uid>/<name>`). */
  readonly socketPath: string;
  run(args: readonly string[]): Promise<string>;
  /** Starts a detached session `name` running argv directly (no shell). */
  newSession(name: string, argv: readonly string[], options?: { columns?: number; rows?: number; cwd?: string; env?: Record<string, string> }): Promise<void>;
  capture(target: string): Promise<string>;
  /** Polls capture-pane until `predicate` holds; throws with the last screen otherwise. */
  waitForScreen(target: string, predicate: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  sendKeys(target: string, ...keys: string[]): Promise<void>;
  /** Types `text` as a bracketed paste, like a driver (load-buffer from stdin + paste-buffer -p -r -d). */
  paste(target: string, text: string): Promise<void>;
  /**
   * How the pane's program ended: `undefined` while it runs, else its exit
   * status (`status`) or the signal that ended it (`signal`), as tmux reports
   * them (needs remain-on-exit, which newSession sets).
   */
  paneExit(target: string): Promise<{ status?: number; signal?: number } | undefined>;
  /** Kills the server and removes its socket file. */
  kill(): Promise<void>;
}

/**
 * A bare session name (`agy`) as a pane target is ambiguous to tmux: without a
 * colon it is tried as a window name first, and a pane running agy (or our
 * simulator under `--as-agy`) renames its window `agy` — so `agy` can name
 * the window of session `agy2`. `agy:` is the session's current pane.
 */
function paneTarget(target: string): string {
  return /[:.%]/.test(target) || target.startsWith("=") ? target : `${target}:`;
}

export function createPrivateTmux(): PrivateTmux {
  const socketName = `agyb-${randomUUID().slice(0, 8)}`;
  // tmux's own rule: $TMUX_TMPDIR when set and non-empty, else /tmp.
  const socketPath = join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, socketName);
  registerTmuxSocket(socketPath);
  const env = { ...process.env };
  delete env.TMUX;
  const exec = (args: readonly string[], stdin?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = execFile("tmux", ["-L", socketName, "-f", "/dev/null", ...args], { env, timeout: 10_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`tmux ${args[0]} failed: ${stderr || error.message}`));
        else resolve(stdout);
      });
      if (stdin !== undefined) child.stdin?.end(stdin);
    });
  const tmux: PrivateTmux = {
    socketName,
    socketPath,
    run: (args) => exec(args),
    async newSession(name, argv, options = {}) {
      const envArgs = Object.entries(options.env ?? {}).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
      await exec([
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        String(options.columns ?? 100),
        "-y",
        String(options.rows ?? 30),
        ...(options.cwd === undefined ? [] : ["-c", options.cwd]),
        ...envArgs,
        ...argv,
      ]);
      // Keep a dead pane visible so a crash shows in the failure message.
      await exec(["set-option", "-t", name, "remain-on-exit", "on"]);
      // Killing the last session must not end the server: a new-session racing
      // with a server on its way out fails with "server exited unexpectedly".
      await exec(["set-option", "-g", "exit-empty", "off"]);
    },
    capture: (target) => exec(["capture-pane", "-p", "-t", paneTarget(target)]),
    async waitForScreen(target, predicate, what, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      let screen = "";
      while (Date.now() < deadline) {
        screen = await exec(["capture-pane", "-p", "-t", paneTarget(target)]);
        if (predicate(screen)) return screen;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`tmux pane never showed ${what}; last screen:\n${screen}`);
    },
    async sendKeys(target, ...keys) {
      await exec(["send-keys", "-t", paneTarget(target), ...keys]);
    },
    async paste(target, text) {
      const buffer = `paste-${randomUUID().slice(0, 8)}`;
      await exec(["load-buffer", "-b", buffer, "-"], text);
      await exec(["paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", paneTarget(target)]);
    },
    async paneExit(target) {
      const [dead = "", status = "", signal = "", serverPid = ""] = (
        await exec(["display-message", "-p", "-t", paneTarget(target), "#{pane_dead} #{pane_dead_status} #{pane_dead_signal} #{pid}"])
      )
        .trim()
        .split(" ");
      if (dead !== "1") return undefined;
      if (status !== "") return { status: Number(status) };
      if (signal !== "") return { signal: Number(signal) };
      // Dead with neither: tmux saw the pty close but has not reaped the
      // program. When the close comes first, tmux calls libutempter, whose own
      // SIGCHLD handler can swallow the one for the pane's exit, and the
      // zombie then waits for the next SIGCHLD (tmux/tmux#311; Debian builds
      // tmux with utempter). Another SIGCHLD makes tmux reap it, as the tmux
      // maintainers suggest there.
      process.kill(Number(serverPid), "SIGCHLD");
      return undefined;
    },
    async kill() {
      // Fails when no server runs (never started, or already gone): the socket file may still be there.
      await exec(["kill-server"]).catch(() => undefined);
      rmSync(socketPath, { force: true });
    },
  };
  return tmux;
}
