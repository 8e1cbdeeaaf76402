/**
 * Runs one tmux command: `child_process.spawn` with an argv, never a shell,
 * so no text a caller passes is ever parsed as shell code. Each command has
 * a deadline; a spawn failure or a deadline becomes a {@link TmuxError}.
 */
import { spawn } from "node:child_process";
import { TmuxError } from "../errors.js";

export interface TmuxExecOptions {
  /** Written to the command's stdin, then stdin is closed (`load-buffer -`). */
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface TmuxExecResult {
  /** Exit code; null when a signal ended the process. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `file` with `args`. Resolves with the exit status whatever it is;
 * rejects only when the process could not run to an end (missing binary,
 * deadline, abort) — with a {@link TmuxError} or an `aborted` error.
 */
export type TmuxExec = (file: string, args: readonly string[], options: TmuxExecOptions) => Promise<TmuxExecResult>;

/** Output beyond this is a bug (a pane capture is a few KB); the command is killed. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The default {@link TmuxExec}: `spawn` with argv, stdout/stderr collected as UTF-8. */
export const spawnTmux: TmuxExec = (file, args, options) =>
  new Promise((resolve, reject) => {
    if (options.signal?.aborted === true) {
      reject(options.signal.reason);
      return;
    }
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, [...args], { stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    } catch (error) {
      reject(new TmuxError("failed", `tmux could not be started: ${(error as Error).message}.`, { cause: error }));
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(() => reject(new TmuxError("timeout", `tmux did not finish within ${options.timeoutMs} ms; check that the tmux server is responsive.`)));
    }, options.timeoutMs);
    const onAbort = (): void => {
      child.kill("SIGKILL");
      finish(() => reject(options.signal?.reason));
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) {
        child.kill("SIGKILL");
        finish(() => reject(new TmuxError("failed", "tmux printed more than 16 MB; this is a bug in the caller's command.")));
        return;
      }
      into.push(chunk);
    };
    child.stdout?.on("data", collect(out));
    child.stderr?.on("data", collect(err));
    child.on("error", (error: NodeJS.ErrnoException) => {
      finish(() =>
        reject(
          error.code === "ENOENT" || error.code === "EACCES"
            ? new TmuxError("no_binary", `The tmux program "${file}" could not be started (${error.code}); install tmux or point tmuxBinary at it.`, {
                cause: error,
              })
            : new TmuxError("failed", `tmux could not be started: ${error.message}.`, { cause: error }),
        ),
      );
    });
    child.on("close", (code) => {
      finish(() => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
    });
    if (options.stdin !== undefined && child.stdin !== null) {
      // tmux may exit before reading everything (e.g. no server): EPIPE is not our failure to report.
      child.stdin.on("error", () => undefined);
      child.stdin.end(options.stdin, "utf8");
    }
  });
