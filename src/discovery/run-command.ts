/**
 * The one way discovery runs a program (tmux, lsof, ps): `spawn` with an
 * argv, never a shell, with a deadline. Resolves with the exit status
 * whatever it is; a missing program or the deadline resolves too (code null
 * and a reason), because for discovery "could not ask" is a finding, not a crash.
 *
 * A spawn can fail three ways and each must become a result: it throws at
 * once (bad arguments), it emits `'error'` on the next tick (ENOENT, EACCES),
 * or — out of file descriptors (EMFILE, ENFILE) — it emits `'error'` AND
 * hands back a child without `stdout`/`stderr`. So the `'error'` listener is
 * attached before anything else touches the child.
 */
import { spawn } from "node:child_process";

export interface RunResult {
  /** Exit code; null when the program could not run or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why there is no exit code: `ENOENT`, `timeout`, `aborted`, … */
  failure?: string;
}

export type RunCommand = (file: string, args: readonly string[], options: { timeoutMs: number; signal?: AbortSignal }) => Promise<RunResult>;

/** Output above this is not what discovery asked for; the program is killed. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** The default {@link RunCommand}. */
export const spawnCommand: RunCommand = (file, args, options) =>
  new Promise((resolve) => {
    if (options.signal?.aborted === true) {
      resolve({ code: null, stdout: "", stderr: "", failure: "aborted" });
      return;
    }
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, [...args], { stdio: ["ignore", "pipe", "pipe"] });
    } catch (error) {
      resolve({ code: null, stdout: "", stderr: "", failure: failureOf(error) });
      return;
    }
    child.on("error", (error) => finish({ code: null, stdout: "", stderr: "", failure: failureOf(error) }));
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: RunResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const text = () => ({ stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    const stop = (failure: string) => {
      child.kill("SIGKILL");
      finish({ code: null, ...text(), failure });
    };
    const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
    const onAbort = () => stop("aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) stop("too much output");
      else into.push(chunk);
    };
    // Absent when the spawn failed for want of fds; the 'error' above settles that case.
    child.stdout?.on("data", collect(out));
    child.stderr?.on("data", collect(err));
    child.on("close", (code) => finish({ code, ...text() }));
  });

function failureOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}
