/**
 * `agy-bridge mcp`'s own arguments: usage errors exit 2 with one sentence,
 * a policy that cannot be used exits 1 before anything is served, and stdio
 * mode ends cleanly when its stdin ends.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agyb-mcp-cli-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("agy-bridge mcp arguments", () => {
  it("refuses HTTP options without --http, a non-loopback --listen, and --workspace without --policy", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--listen", "127.0.0.1:0"], /^agy-bridge mcp: --listen goes with --http; run `agy-bridge mcp --help`\n$/],
      [["--token-file", "/x"], /--token-file goes with --http/],
      [["--json"], /--json goes with --http/],
      [["--http", "--listen", "nonsense"], /--listen wants HOST:PORT/],
      [["--http", "--listen", "10.1.2.3:7879"], /--listen must name a loopback address/],
      [["--workspace", "/tmp"], /--workspace goes with --policy/],
      [["-L", "a", "-S", "/b"], /give -L or -S, not both/],
      [["--pane", "not a pane"], /--pane must be a pane id/],
      [["--url", ""], /--url needs a non-empty value/],
    ];
    for (const [args, expected] of cases) {
      const result = await runMain(["mcp", ...args], { env: { XDG_STATE_HOME: dir } });
      expect([args, result.code, result.stdout]).toEqual([args, 2, ""]);
      expect(result.stderr).toMatch(expected);
    }
  });

  it("exits 1 naming the file when the policy cannot be used, before serving anything", async () => {
    const file = join(dir, "policy.yaml");
    await writeFile(file, "version: 1\ndefault: maybe\n");
    const result = await runMain(["mcp", "--policy", file], { env: { XDG_STATE_HOME: dir } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(file);
  });

  it("puts the note about agents and the policy under --policy in its help, not under --audit-file", async () => {
    const result = await runMain(["mcp", "--help"], { env: { XDG_STATE_HOME: dir } });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const policy = lines.findIndex((l) => l.startsWith("  --policy FILE"));
    expect(lines[policy + 1]).toMatch(/^ {22}\(with --policy, an agent cannot approve what the policy denies\)$/);
    const audit = lines.findIndex((l) => l.startsWith("  --audit-file PATH"));
    expect(lines[audit + 1]).toMatch(/^  --/);
  });

  it("serves stdio until its stdin ends, then exits 0 having written nothing but protocol", async () => {
    const result = await runMain(["mcp", "--audit-file", join(dir, "audit.jsonl")], { env: { XDG_STATE_HOME: dir } });
    expect(result).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});
