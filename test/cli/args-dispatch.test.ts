/** `main`: the top-level help, unknown commands, and every registered command's `--help`. */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { COMMANDS, main } from "../../src/cli/main.js";

function sink(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await main({ argv, env: {}, stdin: new PassThrough(), stdout: out.stream, stderr: err.stream, signal: new AbortController().signal });
  return { code, stdout: out.text(), stderr: err.text() };
}

describe("agy-bridge (no command, unknown command, --help)", () => {
  it("lists every registered command in the top-level help on stdout with --help", async () => {
    const { code, stdout, stderr } = await run(["--help"]);
    expect([code, stderr]).toEqual([0, ""]);
    for (const command of COMMANDS) expect(stdout).toContain(`  ${command.name}`);
  });

  it("treats a missing command as a usage error: help on stderr, exit 2", async () => {
    const { code, stdout, stderr } = await run([]);
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr).toContain("Usage: agy-bridge <command>");
  });

  it("rejects an unknown command with exit 2 and one line on stderr", async () => {
    const { code, stdout, stderr } = await run(["frobnicate"]);
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  it("answers --help for every registered command on stdout with exit 0", async () => {
    for (const command of COMMANDS) {
      const { code, stdout } = await run([command.name, "--help"]);
      expect([command.name, code]).toEqual([command.name, 0]);
      expect(stdout).toMatch(/^Usage: agy-bridge /);
    }
  });
});
