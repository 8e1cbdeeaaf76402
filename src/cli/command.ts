/**
 * The shape every subcommand file exports. The CLI never touches `process`
 * directly: streams, environment and arguments come in, an exit code goes out.
 */
import { parseCommandArgs, UsageError, type ParseArgsOptionsConfig, type ParsedArgs, type PositionalRule } from "./args.js";
import { terminalText } from "./terminal-text.js";

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
  /**
   * Runs with `io.argv` holding the arguments after the command name. A
   * command defined with {@link defineCommand} has them parsed first
   * (`--help` printed, usage errors answered with exit 2) by `main`.
   */
  run(io: CliIo): Promise<number>;
  /** Set by {@link defineCommand}: the command answers `--help` itself. */
  parsesArgs?: boolean;
}

export interface CommandDefinition<O extends ParseArgsOptionsConfig> {
  name: string;
  summary: string;
  help: string;
  options: O;
  positionals?: PositionalRule;
  /** Runs with the parsed arguments; a {@link UsageError} it throws (a bad option value) exits 2. */
  run(io: CliIo, args: ParsedArgs<O>): Promise<number>;
}

/**
 * A command whose arguments are parsed by the shared contract (`args.ts`):
 * `--help` prints `help` and exits 0; a usage error — from the parser or a
 * {@link UsageError} thrown by `run` — prints one sentence and exits 2;
 * otherwise `run` gets the typed values.
 */
export function defineCommand<O extends ParseArgsOptionsConfig>(definition: CommandDefinition<O>): Command {
  const help = definition.help.endsWith("\n") ? definition.help : `${definition.help}\n`;
  return {
    name: definition.name,
    summary: definition.summary,
    help,
    parsesArgs: true,
    async run(io) {
      let args: ParsedArgs<O>;
      try {
        args = parseCommandArgs(definition.name, io.argv, definition.options, definition.positionals);
      } catch (error) {
        io.stderr.write(`agy-bridge ${definition.name}: ${terminalText((error as Error).message)}\n`);
        return 2;
      }
      if (args.help) {
        io.stdout.write(help);
        return 0;
      }
      try {
        return await definition.run(io, args);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        io.stderr.write(`agy-bridge ${definition.name}: ${terminalText(error.message)}\n`);
        return 2;
      }
    },
  };
}
