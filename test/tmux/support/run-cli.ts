/**
 * Runs `agy-bridge` in-process (`main`) with given stdin, or as a real
 * child process when the environment itself is under test (PATH without tmux).
 */
import { execFile } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { main } from "../../../src/cli/main.js";
import { BIN, ROOT } from "./tmux-world.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(argv: readonly string[], stdin = ""): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const env = { ...process.env };
  delete env.TMUX;
  const code = await main({ argv, env, stdin: Readable.from([Buffer.from(stdin, "utf8")]), stdout, stderr, signal: new AbortController().signal });
  return { code, stdout: out, stderr: err };
}

export function runCliProcess(argv: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", BIN, ...argv], { cwd: ROOT, env, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}
