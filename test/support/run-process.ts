/** Runs a child process to its end and hands back its exit code and what it printed. */
import { spawn, type SpawnOptions } from "node:child_process";

export interface RanProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command args…` (argv only, no shell), stdin closed; resolves when it has exited and its output is read. */
export async function runProcess(command: string, args: readonly string[], options: Pick<SpawnOptions, "cwd" | "env"> = {}): Promise<RanProcess> {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  return { code, stdout, stderr };
}
