/**
 * Usage errors across every command: one sentence prefixed once with
 * `agy-bridge <command>: `, exit 2, and never the value that was wrong.
 */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { runMain } from "../support/cli-io.js";

const SECRET = "s3cr3t-Value-7d41a9";

describe("usage errors", () => {
  it("names the command once when there are too many positionals, for every command", async () => {
    for (const command of COMMANDS) {
      const run = await runMain([command.name, "one", "two", "three"]);
      expect([command.name, run.code]).toEqual([command.name, 2]);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr.startsWith(`agy-bridge ${command.name}: `)).toBe(true);
      const sentence = run.stderr.slice(`agy-bridge ${command.name}: `.length).replace(/`agy-bridge [a-z]+ --help`/, "");
      expect([command.name, sentence]).toEqual([command.name, expect.not.stringContaining("agy-bridge")]);
    }
  });

  it("says send needs TEXT without naming the command twice", async () => {
    const run = await runMain(["send", "--pane", "%0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("agy-bridge send: this command needs TEXT; run `agy-bridge send --help`\n");
  });

  it("refuses a --url that does not parse as a usage error, without repeating it, on every command that takes one", async () => {
    const argvs = [
      ...["approve", "deny", "interrupt", "watch"].map((c) => [c, "--url", SECRET, "--conversation", "x"]),
      ["answer", "--url", SECRET, "--conversation", "x", "--option", "1"],
      ["send", "--pane", "%0", "--url", SECRET, "--conversation", "x", "--", "hi"],
    ];
    for (const argv of argvs) {
      const run = await runMain(argv);
      expect([argv[0], run.code, run.stdout]).toEqual([argv[0], 2, ""]);
      expect(run.stderr).toMatch(new RegExp(`^agy-bridge ${argv[0]}: --url does not parse as a URL;`));
      expect(run.stderr).not.toContain(SECRET);
    }
  });

  it("refuses an AGY_BRIDGE_URL that does not parse the same way, naming the variable", async () => {
    const run = await runMain(["approve", "--conversation", "x"], { env: { AGY_BRIDGE_URL: SECRET } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^agy-bridge approve: AGY_BRIDGE_URL does not parse as a URL;/);
    expect(run.stderr).not.toContain(SECRET);
  });
});
