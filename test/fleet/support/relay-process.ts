/**
 * `agy-bridge relay` as a subprocess (through tsx, the way bin.ts runs), so a
 * test can kill it with SIGKILL in the middle of a command.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { firstLine } from "../../support/first-line.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

export interface RelayProcess {
  child: ChildProcess;
  /** The ready line it printed. */
  ready: Record<string, unknown>;
  stderr(): string;
  kill(): Promise<void>;
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>;
}

export async function startRelayProcess(args: readonly string[], stateDir: string, env: Record<string, string> = {}): Promise<RelayProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: stateDir, ...env };
  delete childEnv["TMUX"];
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "relay", "--json", ...args], { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  let line: string;
  try {
    line = await Promise.race([
      firstLine(child.stdout!, "agy-bridge relay", 30_000, () => `stderr: ${stderr}`),
      exited.then((code) => Promise.reject(new Error(`agy-bridge relay exited with ${code} before its ready line; stderr: ${stderr}`))),
    ]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    child,
    ready: JSON.parse(line) as Record<string, unknown>,
    stderr: () => stderr,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs `agy-bridge relay` expecting it to stop by itself (a refusal): its exit code and stderr. */
export async function runRelayOnce(args: readonly string[], stateDir: string): Promise<{ code: number | null; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: stateDir };
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "relay", "--json", ...args], { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  clearTimeout(timer);
  return { code, stderr };
}
