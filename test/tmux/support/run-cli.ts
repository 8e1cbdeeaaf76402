/**
 * Runs `agy-bridge` in-process (`main`) with given stdin, or as a real
 * child process when the environment itself is under test (PATH without tmux).
 */
import { execFile } from "node:child_process";
import { Readable } from "node:stream";
import { runMain } from "../../support/cli-io.js";
import { BIN, ROOT } from "./tmux-world.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(argv: readonly string[], stdin = ""): Promise<CliRun> {
  const env = { ...process.env };
  delete env.TMUX;
  return runMain(argv, { env, stdin: Readable.from([Buffer.from(stdin, "utf8")]) });
}

export function runCliProcess(argv: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", BIN, ...argv], { cwd: ROOT, env, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}
