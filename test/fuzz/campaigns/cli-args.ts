/**
 * The shared CLI argument parser under odd command lines: every option form
 * (`--x v`, `--x=v`, `-xV`, grouped shorts, repeats), unknown options,
 * `--help` as an option and as a value, `-`, `--`, values that start with a
 * dash, names like `__proto__`. Promises: it returns or throws `UsageError`,
 * nothing else; a usage error never repeats a value that was given (values
 * here are unique markers); what it returns respects the option types and
 * the positional rule.
 */
import { parseCommandArgs, UsageError, type ParseArgsOptionsConfig, type PositionalRule } from "../../../src/cli/args.js";
import type { Rng } from "../rng.js";
import { invariant, type Campaign } from "../runner.js";

const OPTIONS = {
  url: { type: "string" },
  "csrf-token": { type: "string" },
  conversation: { type: "string" },
  json: { type: "boolean" },
  turn: { type: "string", multiple: true },
  timeout: { type: "string", short: "t" },
  verbose: { type: "boolean", short: "v" },
} as const satisfies ParseArgsOptionsConfig;

const STRING_OPTIONS = new Set(["--url", "--csrf-token", "--conversation", "--turn", "--timeout"]);

const RULES: PositionalRule[] = [{}, { max: 1, name: "FILE" }, { min: 1, max: Infinity, name: "TEXT" }, { min: 2, max: 2 }];

export interface ArgsInput {
  argv: string[];
  /** Every value given (to an option or as a positional): none may appear in an error. */
  values: string[];
  rule: number;
}

function generate(rng: Rng): ArgsInput {
  const argv: string[] = [];
  const values: string[] = [];
  // A value that follows an option may start with dashes; a standalone one would be read as an option.
  const value = (dashes = true) => {
    const lead = dashes ? rng.pick(["", "-", "--", "=", "--help="]) : rng.pick(["", "=", "x--"]);
    const v = `${lead}Vq${rng.int(1e9).toString(36)}x${rng.pick(["", " spaced", "=eq", "\u00e9", "\n"])}`;
    values.push(v);
    return v;
  };
  const longs = [
    "--url",
    "--csrf-token",
    "--conversation",
    "--json",
    "--turn",
    "--timeout",
    "--verbose",
    "--help",
    "--nope",
    "--__proto__",
    "--toString",
    "--constructor",
    "--",
    "---x",
    "--=",
    "--URL",
  ];
  for (let n = rng.between(0, 8); n > 0; n--) {
    switch (rng.int(9)) {
      case 0:
      case 1: {
        // Only a string option takes the next argument as its value.
        const long = rng.pick(longs);
        argv.push(long, value(STRING_OPTIONS.has(long)));
        break;
      }
      case 2:
        argv.push(`${rng.pick(longs)}=${value()}`);
        break;
      case 3:
        argv.push(rng.pick(longs));
        break;
      case 4:
        argv.push(`-${rng.pick(["t", "v", "h", "x", "vt", "tv", "vh"])}${rng.chance(0.5) ? value() : ""}`);
        break;
      case 5:
        argv.push(rng.pick(["-", "--", "-h", "--help", ""]));
        break;
      case 6:
        argv.push("-t", value(true));
        break;
      default:
        argv.push(value(false));
    }
  }
  return { argv, values, rule: rng.int(RULES.length) };
}

function run(input: ArgsInput): "ok" | "typed_error" {
  const rule = RULES[input.rule] ?? {};
  let parsed;
  try {
    parsed = parseCommandArgs("fuzz", input.argv, OPTIONS, rule);
  } catch (error) {
    if (error instanceof UsageError) {
      // Only markers long enough to be recognisable; a one-character value like "-" could be a word.
      const echoed = input.values.filter((v) => v.length >= 6).find((v) => error.message.includes(v));
      invariant(echoed === undefined, () => `the usage error repeats the value ${JSON.stringify(echoed)}: ${error.message}`);
    }
    throw error;
  }
  if (parsed.help) return "ok";
  const count = parsed.positionals.length;
  invariant(count >= (rule.min ?? 0) && count <= (rule.max ?? 0), () => `${count} positionals accepted under ${JSON.stringify(rule)}`);
  for (const [name, got] of Object.entries(parsed.values as Record<string, unknown>)) {
    const spec = (OPTIONS as ParseArgsOptionsConfig)[name];
    invariant(spec !== undefined, () => `an unknown option ${name} was returned`);
    const ok =
      spec.type === "boolean"
        ? typeof got === "boolean"
        : spec.multiple === true
          ? Array.isArray(got) && got.every((g) => typeof g === "string")
          : typeof got === "string";
    invariant(ok, () => `--${name} came back as ${JSON.stringify(got)}`);
  }
  return "ok";
}

export const cliArgsCampaign: Campaign<ArgsInput> = {
  name: "CLI argument parser",
  generate,
  run,
  isTyped: (error) => error instanceof UsageError,
  *shrink(input) {
    for (let i = input.argv.length - 1; i >= 0; i--) yield { ...input, argv: [...input.argv.slice(0, i), ...input.argv.slice(i + 1)] };
  },
};
