/** The shared argument contract (src/cli/args.ts, defineCommand): parser rules and exit codes. */
import { describe, expect, it } from "vitest";
import { connectionArgs, CONNECTION_OPTIONS, parseCommandArgs, UsageError, type ParseArgsOptionsConfig } from "../../src/cli/args.js";
import { defineCommand } from "../../src/cli/command.js";
import { runCommand } from "../support/cli-io.js";

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  json: { type: "boolean" },
  turn: { type: "string", multiple: true },
  timeout: { type: "string", short: "t" },
} as const satisfies ParseArgsOptionsConfig;

const SECRET = "sk-live-5ecret-Tok3n-9f8e7d";

function parse(argv: string[], positionals = { max: 1, name: "FILE" }) {
  return parseCommandArgs("probe", argv, OPTIONS, positionals);
}

function usageMessage(argv: string[]): string {
  try {
    parse(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`expected a usage error for ${JSON.stringify(argv)}`);
}

/** Runs a command built with defineCommand and reports what it printed and what `run` received. */
async function runProbe(argv: string[], run: (args: unknown) => Promise<number> = async () => 0) {
  const seen: unknown[] = [];
  const command = defineCommand({
    name: "probe",
    summary: "a test command",
    help: "Usage: agy-bridge probe [FILE]",
    options: OPTIONS,
    positionals: { max: 1, name: "FILE" },
    async run(_io, args) {
      seen.push(args);
      return run(args);
    },
  });
  const { code, stdout, stderr } = await runCommand(command, argv);
  return { code, stdout, stderr, ran: seen.length > 0, args: seen[0] };
}

describe("parseCommandArgs", () => {
  it("reads --x=v and --x v alike", () => {
    expect(parse(["--conversation=c-1"]).values.conversation).toBe("c-1");
    expect(parse(["--conversation", "c-1"]).values.conversation).toBe("c-1");
    expect(parse(["-t", "500"]).values.timeout).toBe("500");
  });

  it("collects a repeatable option in order, whichever form each use takes", () => {
    expect(parse(["--turn", "first", "--turn=second", "--turn", "third"]).values.turn).toEqual(["first", "second", "third"]);
  });

  it("takes - as a positional, not as an option", () => {
    expect(parse(["-", "--json"])).toMatchObject({ positionals: ["-"], values: { json: true }, help: false });
  });

  it("ends the options at --, so a later --help or --json is a positional", () => {
    const parsed = parse(["--", "--help"]);
    expect(parsed.help).toBe(false);
    expect(parsed.positionals).toEqual(["--help"]);
    expect(parse(["--json", "--", "--json"])).toMatchObject({ values: { json: true }, positionals: ["--json"] });
  });

  it("treats --help given as an option's value as that value", () => {
    const parsed = parse(["--conversation=--help"]);
    expect(parsed.help).toBe(false);
    expect(parsed.values.conversation).toBe("--help");
    expect(parse(["--turn=-h"]).values.turn).toEqual(["-h"]);
  });

  it("asks for the = form when a value after a space starts with a dash", () => {
    expect(usageMessage(["--conversation", "--help"])).toMatch(/^--conversation needs a value \(write --conversation=VALUE/);
    expect(usageMessage(["-t", "-5"])).toMatch(/^-t needs a value/);
  });

  it("sees --help and -h wherever they are options, even beside other mistakes", () => {
    expect(parse(["FILE", "--help"]).help).toBe(true);
    expect(parse(["-h"]).help).toBe(true);
    expect(parse(["--frobnicate", "--help"]).help).toBe(true);
    expect(parse(["a", "b", "c", "-h"]).help).toBe(true);
  });

  it("rejects unknown options, long and short, by name", () => {
    expect(usageMessage(["--frobnicate"])).toBe("unknown option --frobnicate; run `agy-bridge probe --help`");
    expect(usageMessage(["-x"])).toMatch(/^unknown option -x;/);
    expect(usageMessage(["--__proto__=1"])).toMatch(/^unknown option --__proto__;/);
    expect(usageMessage(["--toString"])).toMatch(/^unknown option --toString;/);
  });

  it("rejects a value given to a boolean and a string option without one", () => {
    expect(usageMessage(["--json=yes"])).toMatch(/^--json takes no value;/);
    expect(usageMessage(["--help=yes"])).toMatch(/^--help takes no value;/);
    expect(usageMessage(["--conversation"])).toMatch(/^--conversation needs a value;/);
  });

  it("enforces the number of positionals", () => {
    expect(usageMessage(["a", "b"])).toBe("this command takes at most 1 FILE; run `agy-bridge probe --help`");
    expect(() => parse([], { max: 0, name: "argument" })).not.toThrow();
    expect(() => parseCommandArgs("probe", ["x"], OPTIONS, { max: 0 })).toThrow(/takes no arguments/);
    expect(() => parseCommandArgs("probe", [], OPTIONS, { min: 1, max: 1, name: "FILE" })).toThrow(/needs FILE/);
  });

  it("never repeats a value it was given in an error", () => {
    const attempts = [[`--csrf-tokn=${SECRET}`], ["--csrf-tokn", SECRET], [`--json=${SECRET}`], ["--csrf-token", `-${SECRET}`], [`-x${SECRET}`], ["a", SECRET]];
    for (const argv of attempts) {
      const message = usageMessage(argv);
      expect(message).not.toContain(SECRET);
      expect(message).not.toContain(SECRET.slice(0, 8));
    }
  });
});

describe("connectionArgs", () => {
  it("prefers the options, falls back to AGY_BRIDGE_URL / AGY_BRIDGE_CSRF_TOKEN, and ignores empty variables", () => {
    const env = { AGY_BRIDGE_URL: "https://127.0.0.1:4100", AGY_BRIDGE_CSRF_TOKEN: "from-env" };
    expect(connectionArgs({}, env)).toEqual({ url: "https://127.0.0.1:4100", csrfToken: "from-env" });
    expect(connectionArgs({ url: "http://127.0.0.1:9", "csrf-token": "flag", conversation: "c" }, env)).toEqual({
      url: "http://127.0.0.1:9",
      csrfToken: "flag",
      conversationId: "c",
    });
    expect(connectionArgs({}, { AGY_BRIDGE_URL: "", AGY_BRIDGE_CSRF_TOKEN: "" })).toEqual({});
  });

  it("refuses an option given an empty value instead of falling back to the environment", () => {
    expect(() => connectionArgs({ "csrf-token": "" }, { AGY_BRIDGE_CSRF_TOKEN: "from-env" })).toThrow(UsageError);
  });
});

describe("defineCommand", () => {
  it("prints the help on stdout and exits 0 without running the command", async () => {
    const result = await runProbe(["--help"]);
    expect(result).toMatchObject({ code: 0, stdout: "Usage: agy-bridge probe [FILE]\n", stderr: "", ran: false });
  });

  it("runs the command, not the help, when --help is an option's value or follows --", async () => {
    for (const argv of [["--conversation=--help"], ["--", "--help"]]) {
      const result = await runProbe(argv);
      expect(result).toMatchObject({ code: 0, stdout: "", ran: true });
    }
  });

  it("exits 2 with one sentence on stderr for a usage error, never echoing the value", async () => {
    const result = await runProbe([`--csrf-tokn=${SECRET}`]);
    expect(result).toMatchObject({ code: 2, stdout: "", ran: false });
    expect(result.stderr).toBe("agy-bridge probe: unknown option --csrf-tokn; run `agy-bridge probe --help`\n");
  });

  it("exits 2 when the command itself rejects a value with a UsageError", async () => {
    const result = await runProbe(["--timeout", "soon"], async () => {
      throw new UsageError("--timeout wants milliseconds");
    });
    expect(result).toMatchObject({ code: 2, stdout: "", stderr: "agy-bridge probe: --timeout wants milliseconds\n" });
  });

  it("lets other failures through to the caller", async () => {
    await expect(
      runProbe([], async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
  });
});
