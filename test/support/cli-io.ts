/**
 * Drives the CLI in-process: a `CliIo` whose stdout and stderr are kept as
 * strings, read back while the command runs or after it exits.
 */
import { Readable, Writable } from "node:stream";
import type { CliIo, Command } from "../../src/cli/command.js";
import { main } from "../../src/cli/main.js";

/** A writable stream that keeps everything written to it, as text, as soon as it is written. */
export function textSink(): { stream: Writable; text(): string } {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

export interface CaptureOptions {
  /** The environment the command sees (default: empty). */
  env?: CliIo["env"];
  /** Default: an empty stdin that has already ended. */
  stdin?: NodeJS.ReadableStream;
  /** Default: a signal that {@link CapturedIo.abort} aborts. */
  signal?: AbortSignal;
}

/** A `CliIo` and what was written to it so far. */
export interface CapturedIo {
  io: CliIo;
  stdout(): string;
  stderr(): string;
  /** Aborts the default signal (a Ctrl-C); does nothing to a signal passed in. */
  abort(): void;
}

export function captureIo(argv: readonly string[], options: CaptureOptions = {}): CapturedIo {
  const out = textSink();
  const err = textSink();
  const controller = new AbortController();
  const io: CliIo = {
    argv,
    env: options.env ?? {},
    stdin: options.stdin ?? Readable.from([]),
    stdout: out.stream,
    stderr: err.stream,
    signal: options.signal ?? controller.signal,
  };
  return { io, stdout: out.text, stderr: err.text, abort: () => controller.abort() };
}

/** What a finished run printed, and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A `main` run that is still going: its exit code to come, and its output so far. */
export interface StartedCli extends Omit<CapturedIo, "io"> {
  code: Promise<number>;
}

/** Starts `main` on `argv` (the command name first) without waiting for it. */
export function startMain(argv: readonly string[], options: CaptureOptions = {}): StartedCli {
  const { io, ...captured } = captureIo(argv, options);
  return { ...captured, code: main(io) };
}

/** Runs `main` on `argv` (the command name first) to its exit code. */
export async function runMain(argv: readonly string[], options: CaptureOptions = {}): Promise<CliResult> {
  return finished(startMain(argv, options));
}

/** Runs one command on its own arguments (no command name) to its exit code. */
export async function runCommand(command: Command, argv: readonly string[], options: CaptureOptions = {}): Promise<CliResult> {
  const { io, ...captured } = captureIo(argv, options);
  return finished({ ...captured, code: command.run(io) });
}

async function finished(run: StartedCli): Promise<CliResult> {
  const code = await run.code;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}
