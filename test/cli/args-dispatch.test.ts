/** `main`: the top-level help, unknown commands, and every registered command's `--help`. */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { runMain } from "../support/cli-io.js";

describe("agy-bridge (no command, unknown command, --help)", () => {
  it("lists every registered command in the top-level help on stdout with --help", async () => {
    const { code, stdout, stderr } = await runMain(["--help"]);
    expect([code, stderr]).toEqual([0, ""]);
    for (const command of COMMANDS) expect(stdout).toContain(`  ${command.name}`);
  });

  it("treats a missing command as a usage error: help on stderr, exit 2", async () => {
    const { code, stdout, stderr } = await runMain([]);
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr).toContain("Usage: agy-bridge <command>");
  });

  it("rejects an unknown command with exit 2 and one line on stderr", async () => {
    const { code, stdout, stderr } = await runMain(["frobnicate"]);
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  it("answers --help for every registered command on stdout with exit 0", async () => {
    for (const command of COMMANDS) {
      const { code, stdout } = await runMain([command.name, "--help"]);
      expect([command.name, code]).toEqual([command.name, 0]);
      expect(stdout).toMatch(/^Usage: agy-bridge /);
    }
  });
});
