/**
 * One argument contract for every subcommand, on `node:util` `parseArgs`:
 * strict (unknown options are errors), `--x=v` and `--x v` forms, repeatable
 * options, `-` as a positional and `--` ending the options. `--help` counts
 * only where it is an option, never as another option's value.
 *
 * Errors never echo what was given to an option: a mistyped `--csrf-token`
 * value must not land in a terminal's scrollback or a CI log.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { AgyBridgeError } from "../errors.js";

/** The `options` object of `parseArgs`. */
export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** A usage error: the CLI prints the message and exits 2. */
export class UsageError extends AgyBridgeError {
  override name = "UsageError";
  constructor(message: string) {
    super("invalid_argument", message);
  }
}

/** Options every command that talks to a language server accepts. */
export const CONNECTION_OPTIONS = {
  url: { type: "string" },
  "csrf-token": { type: "string" },
  conversation: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** The help lines for {@link CONNECTION_OPTIONS}, to paste into a command's help text. */
export const CONNECTION_HELP = `  --conversation ID   the conversation to work on (discovery finds its server)
  --url URL           the language server's URL (env AGY_BRIDGE_URL); skips discovery
  --csrf-token T      the server's CSRF token (env AGY_BRIDGE_CSRF_TOKEN); never printed`;

export interface ConnectionArgs {
  url?: string;
  csrfToken?: string;
  conversationId?: string;
}

/** Reads the connection options, falling back to `AGY_BRIDGE_URL` / `AGY_BRIDGE_CSRF_TOKEN`. */
export function connectionArgs(
  values: { url?: string | undefined; "csrf-token"?: string | undefined; conversation?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): ConnectionArgs {
  const out: ConnectionArgs = {};
  const url = values.url ?? nonEmpty(env["AGY_BRIDGE_URL"]);
  const csrfToken = values["csrf-token"] ?? nonEmpty(env["AGY_BRIDGE_CSRF_TOKEN"]);
  if (url !== undefined) out.url = url;
  if (csrfToken !== undefined) out.csrfToken = csrfToken;
  if (values.conversation !== undefined) out.conversationId = values.conversation;
  return out;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

export interface PositionalRule {
  /** Fewest positionals accepted (default 0). */
  min?: number;
  /** Most positionals accepted (default 0; `Infinity` for any number). */
  max?: number;
  /** What the positionals are, for error messages, e.g. `"FILE"`. */
  name?: string;
}

export interface ParsedArgs<O extends ParseArgsOptionsConfig> {
  values: ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: true }>>["values"];
  positionals: string[];
  /** True when `--help`/`-h` appeared as an option. */
  help: boolean;
}

const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const satisfies ParseArgsOptionsConfig;

/**
 * Parses `argv` for `command`. Throws {@link UsageError} with a sentence that
 * names the option but never its value.
 */
export function parseCommandArgs<O extends ParseArgsOptionsConfig>(
  command: string,
  argv: readonly string[],
  options: O,
  positionals: PositionalRule = {},
): ParsedArgs<O> {
  const config = { ...options, ...HELP_OPTION };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: true, tokens: true });
  } catch (error) {
    throw new UsageError(`${describeParseFailure(error, argv, config)}; run \`agy-bridge ${command} --help\``);
  }
  const values = parsed.values as Record<string, unknown>;
  const help = values["help"] === true;
  delete values["help"];
  if (!help) {
    const min = positionals.min ?? 0;
    const max = positionals.max ?? 0;
    const what = positionals.name ?? "argument";
    if (parsed.positionals.length > max) {
      throw new UsageError(
        max === 0
          ? `agy-bridge ${command} takes no ${what}s; run \`agy-bridge ${command} --help\``
          : `agy-bridge ${command} takes at most ${max} ${what}${max === 1 ? "" : "s"}; run \`agy-bridge ${command} --help\``,
      );
    }
    if (parsed.positionals.length < min) {
      throw new UsageError(`agy-bridge ${command} needs ${what}; run \`agy-bridge ${command} --help\``);
    }
  }
  return { values: values as ParsedArgs<O>["values"], positionals: parsed.positionals, help };
}

/** Rebuilds node's parse error as a sentence that names the option and never quotes its value. */
function describeParseFailure(error: unknown, argv: readonly string[], config: ParseArgsOptionsConfig): string {
  const code = (error as { code?: unknown }).code;
  const name = offendingOption(argv, config);
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return name === undefined ? "unknown option" : `unknown option ${name}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return name === undefined ? "an option is missing its value or has one it does not take" : `${name} is missing its value or has one it does not take`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return "unexpected argument";
    default:
      return "the arguments could not be read";
  }
}

/** The first option token that is unknown, or a string option without a value, or a boolean given one. */
function offendingOption(argv: readonly string[], config: ParseArgsOptionsConfig): string | undefined {
  const shorts = new Map<string, string>();
  for (const [long, spec] of Object.entries(config)) if (spec.short !== undefined) shorts.set(spec.short, long);
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "--") return undefined;
    if (!token.startsWith("-") || token === "-") continue;
    const long = token.startsWith("--") ? token.slice(2).split("=")[0] ?? "" : shorts.get(token.slice(1, 2));
    const shown = token.startsWith("--") ? `--${long}` : token.slice(0, 2);
    const spec = long === undefined ? undefined : config[long];
    if (spec === undefined) return shown;
    const inline = token.startsWith("--") && token.includes("=");
    if (spec.type === "boolean" && inline) return shown;
    if (spec.type === "string" && !inline) {
      const next = argv[i + 1];
      if (next === undefined) return shown;
      i++;
    }
  }
  return undefined;
}
