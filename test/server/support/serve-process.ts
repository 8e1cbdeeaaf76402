/**
 * `agy-bridge serve` as a subprocess (through tsx, the way bin.ts runs), with
 * its own config directory so the token file is private to the test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { firstLine } from "../../support/first-line.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const BIN = resolve(ROOT, "src/cli/bin.ts");

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  token: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Set once it exited: its code, or the signal's name. */
  exited(): string | undefined;
  /** SIGTERM, then waits (bounded) for it to exit. */
  stop(): Promise<void>;
}

export interface ServeProcessOptions {
  /** XDG_CONFIG_HOME: where the token file lives (the same directory across a restart keeps the token). */
  configHome: string;
  args?: readonly string[];
  /** Runs it under `prlimit --nofile=N:N`. */
  fileLimit?: number;
}

export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  // The audit log goes beside the token, in the test's own directory.
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: options.configHome, XDG_STATE_HOME: options.configHome };
  delete env["AGY_BRIDGE_TOKEN"];
  delete env["TMUX"];
  const argv = [process.execPath, "--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--json", ...(options.args ?? [])];
  const command = options.fileLimit === undefined ? argv : ["prlimit", `--nofile=${options.fileLimit}:${options.fileLimit}`, "--", ...argv];
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let exit: string | undefined;
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => (stderr += chunk));
  const ended = new Promise<void>((done) =>
    child.once("exit", (code, signal) => {
      exit = code === null ? String(signal) : String(code);
      done();
    }),
  );
  const died = ended.then(() => {
    throw new Error(`serve exited with ${exit}; stderr: ${stderr}`);
  });
  died.catch(() => undefined);
  try {
    const first = await Promise.race([firstLine(child.stdout!, "agy-bridge serve", 30_000, () => `stderr: ${stderr}`), died]);
    const { url, tokenFile } = JSON.parse(first) as { url: string; tokenFile: string };
    const token = (await readFile(tokenFile, "utf8")).trim();
    return {
      child,
      url,
      token,
      stderr: () => stderr,
      exited: () => exit,
      async stop() {
        if (exit !== undefined) return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await ended;
        clearTimeout(timer);
      },
    };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
