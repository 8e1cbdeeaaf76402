/**
 * One argument contract for every subcommand, on `node:util` `parseArgs`:
 * strict (unknown options are errors), `--x=v` and `--x v` forms, repeatable
 * options (`multiple: true`), `-` as a positional and `--` ending the
 * options. `--help` counts only where it is an option, never as another
 * option's value or after `--`.
 *
 * `parseArgs` runs non-strict with tokens, and this file checks the tokens
 * itself: node's own strict errors quote what was typed, and errors here
 * must never echo what was given to an option — a mistyped `--csrf-token`
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

/** The connection options as a command uses them. */
export interface ConnectionArgs {
  url?: string;
  csrfToken?: string;
  conversationId?: string;
}

/**
 * Reads the connection options, falling back to `AGY_BRIDGE_URL` /
 * `AGY_BRIDGE_CSRF_TOKEN` (an empty variable counts as unset). Throws
 * {@link UsageError} when an option was given an empty value or the URL
 * does not parse.
 */
export function connectionArgs(
  values: { url?: string | undefined; "csrf-token"?: string | undefined; conversation?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): ConnectionArgs {
  for (const name of ["url", "csrf-token", "conversation"] as const) {
    if (values[name] === "") throw new UsageError(`--${name} needs a non-empty value`);
  }
  const out: ConnectionArgs = {};
  const url = values.url ?? nonEmpty(env["AGY_BRIDGE_URL"]);
  // A URL is not a secret, but a value pasted into the wrong option may be: the sentence never repeats it.
  if (url !== undefined && !URL.canParse(url)) {
    const source = values.url !== undefined ? "--url" : "AGY_BRIDGE_URL";
    throw new UsageError(`${source} does not parse as a URL; give the language server's loopback URL, like https://127.0.0.1:PORT`);
  }
  const csrfToken = values["csrf-token"] ?? nonEmpty(env["AGY_BRIDGE_CSRF_TOKEN"]);
  if (url !== undefined) out.url = url;
  if (csrfToken !== undefined) out.csrfToken = csrfToken;
  if (values.conversation !== undefined) out.conversationId = values.conversation;
  return out;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** How many positionals a command takes. */
export interface PositionalRule {
  /** Fewest positionals accepted (default 0). */
  min?: number;
  /** Most positionals accepted (default 0; `Infinity` for any number). */
  max?: number;
  /** What the positionals are, for error messages, e.g. `"FILE"`. */
  name?: string;
}

/** The parsed arguments: typed option values, positionals, and whether help was asked for. */
export interface ParsedArgs<O extends ParseArgsOptionsConfig> {
  values: ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: true }>>["values"];
  positionals: string[];
  /** True when `--help`/`-h` appeared as an option. */
  help: boolean;
}

const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const satisfies ParseArgsOptionsConfig;

/**
 * Parses `argv` for `command`. `--help` wins over every other problem (a
 * user asking for help gets it); otherwise throws {@link UsageError} with a
 * sentence that names the option but never its value.
 */
export function parseCommandArgs<O extends ParseArgsOptionsConfig>(
  command: string,
  argv: readonly string[],
  options: O,
  positionals: PositionalRule = {},
): ParsedArgs<O> {
  if (Object.hasOwn(options, "help")) throw new AgyBridgeError("internal", `agy-bridge ${command} defines its own --help option; the shared parser owns it`);
  const config: ParseArgsOptionsConfig = { ...options, ...HELP_OPTION };
  const hint = `run \`agy-bridge ${command} --help\``;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: false, allowPositionals: true, tokens: true });
  } catch {
    throw new UsageError(`the arguments could not be read; ${hint}`);
  }
  let help = false;
  let problem: string | undefined;
  for (const token of parsed.tokens) {
    if (token.kind !== "option") continue;
    if (token.name === "help") {
      if (token.value === undefined) help = true;
      else problem ??= `${token.rawName} takes no value`;
      continue;
    }
    problem ??= tokenProblem(token, config);
  }
  if (help) return { values: {} as ParsedArgs<O>["values"], positionals: parsed.positionals, help };
  if (problem !== undefined) throw new UsageError(`${problem}; ${hint}`);

  const min = positionals.min ?? 0;
  const max = positionals.max ?? 0;
  const what = positionals.name ?? "argument";
  const count = parsed.positionals.length;
  if (count > max) {
    // The CLI prefixes every usage error with `agy-bridge <command>: `, so the sentence does not name the command again.
    throw new UsageError(max === 0 ? `this command takes no ${what}s; ${hint}` : `this command takes at most ${max} ${what}${max === 1 ? "" : "s"}; ${hint}`);
  }
  if (count < min) throw new UsageError(`this command needs ${what}; ${hint}`);
  const values = parsed.values as Record<string, unknown>;
  delete values["help"];
  return { values: values as ParsedArgs<O>["values"], positionals: parsed.positionals, help: false };
}

interface OptionToken {
  name: string;
  rawName: string;
  value?: string | undefined;
  inlineValue?: boolean | undefined;
}

/** What is wrong with one option token, named by its option, or undefined. */
function tokenProblem(token: OptionToken, config: ParseArgsOptionsConfig): string | undefined {
  // hasOwn: an option spelled `--__proto__` or `--toString` is unknown, not inherited.
  const spec = Object.hasOwn(config, token.name) ? config[token.name] : undefined;
  // `--=VALUE` reaches here as an option named "=VALUE": name only what precedes the "=".
  if (spec === undefined) return `unknown option ${token.rawName.includes("=") ? `${token.rawName.slice(0, token.rawName.indexOf("="))}=…` : token.rawName}`;
  if (spec.type === "boolean") return token.value === undefined ? undefined : `${token.rawName} takes no value`;
  if (token.value === undefined) return `${token.rawName} needs a value`;
  // `--x -y` is ambiguous (a forgotten value, or a value that starts with a dash):
  // node's strict mode refuses it too, and `--x=-y` says which was meant.
  if (token.inlineValue === false && token.value.length > 1 && token.value.startsWith("-")) {
    return `${token.rawName} needs a value (write ${token.rawName.startsWith("--") ? `${token.rawName}=VALUE` : `${token.rawName}VALUE`} for a value that starts with "-")`;
  }
  return undefined;
}
