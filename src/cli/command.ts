/**
 * The shape every subcommand file exports. The CLI never touches `process`
 * directly: streams, environment and arguments come in, an exit code goes out.
 */
export interface CliIo {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Aborted on SIGINT/SIGTERM by bin.ts; long-running commands stop promptly. */
  signal: AbortSignal;
}

export interface Command {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** Full `--help` text. */
  help: string;
  run(io: CliIo): Promise<number>;
}
