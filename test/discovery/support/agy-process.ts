/**
 * Real agy-shaped processes for discovery tests: the simulator under the
 * compiled `…/bin/agy` launcher (which holds both listeners as fds and gives
 * its child the ANTIGRAVITY_* environment, spike-notes §10.2, §10.3), started
 * either through `agy-bridge sim --as-agy` or through the launcher directly
 * when a test needs a token to live somewhere else. Every process is stopped
 * by `stop()`; waits are bounded and say what they saw.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildAgyLauncher } from "../../../src/sim/launcher/build-agy-launcher.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const BIN = resolve(ROOT, "src/cli/bin.ts");

export interface SimInfo {
  conversationId: string;
  tlsUrl: string;
  plainUrl: string;
  /** The simulator (the launcher's child). */
  pid: number;
  /** The launcher: what discovery must find. */
  agyPid: number;
}

export interface AgyProcess {
  info: SimInfo;
  stop(): Promise<void>;
}

/** The launcher built once per cache dir (the build is cached by source hash). */
export async function launcherPath(cacheDir: string): Promise<string> {
  return buildAgyLauncher({ outDir: join(cacheDir, "launcher") });
}

export function tempCache(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "agy-disc-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `agy-bridge sim --as-agy --headless [--csrf_token T]`: the token is agy's first argument. */
export function startSimAsAgy(cacheDir: string, token?: string, simArgs: readonly string[] = []): Promise<AgyProcess> {
  const args = ["--import", "tsx", BIN, "sim", "--as-agy", "--headless", ...(token === undefined ? [] : ["--csrf_token", token]), ...simArgs];
  return started(spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, AGY_BRIDGE_CACHE_DIR: cacheDir }, stdio: ["ignore", "pipe", "pipe"] }));
}

export interface LauncherPlan {
  /** The launcher's own arguments (after `…/bin/agy`); `--headless` is added. */
  launcherArgs: string[];
  /** Put into the simulator's environment through `env NAME=value` (the launcher does not see it). */
  childEnv?: Record<string, string>;
  /** Extra simulator arguments placed before the launcher's own. */
  simArgs?: string[];
}

/**
 * Runs the launcher directly, so a test decides where the token lives: in
 * the launcher's argv, only in the child's environment, or only in the
 * child's argv (where discovery must not look).
 */
export async function startLauncher(cacheDir: string, plan: LauncherPlan): Promise<AgyProcess> {
  const launcher = await launcherPath(cacheDir);
  const envPrefix = Object.entries(plan.childEnv ?? {}).map(([k, v]) => `${k}=${v}`);
  const simArgv = [process.execPath, "--import", "tsx", BIN, "sim", "--listen-fds", "3,4", ...(plan.simArgs ?? [])];
  const node = envPrefix.length === 0 ? process.execPath : "/usr/bin/env";
  const argv = envPrefix.length === 0 ? simArgv.slice(1) : [...envPrefix, ...simArgv];
  const env = { ...process.env, AGY_SIM_NODE: node, AGY_SIM_ARGV: argv.join("\n") };
  delete (env as Record<string, string | undefined>).ANTIGRAVITY_CSRF_TOKEN;
  return started(spawn(launcher, [...plan.launcherArgs, "--headless"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] }));
}

async function started(child: ChildProcess): Promise<AgyProcess> {
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`the simulator printed no JSON line within 30 s; stderr: ${stderr}`)), 30_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (stdout.includes("\n")) {
        clearTimeout(timer);
        resolveLine(stdout.split("\n")[0] as string);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the simulator exited ${code} before its JSON line; stderr: ${stderr}`));
    });
  });
  const info = JSON.parse(line) as SimInfo;
  return {
    info,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** True while /proc still shows the pid. */
export function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`).length > 0;
  } catch {
    return false;
  }
}
