/**
 * `serve --help` reads as one table: every option of its Options block
 * (the policy options it shares with other commands included) starts its
 * description in the same column, and `-h, --help` stays in that block
 * rather than trailing the notification options.
 */
import { describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";

/** The option lines of a help block: two spaces, a flag, two or more spaces, the description. */
function descriptionColumns(block: string): Map<string, number> {
  const columns = new Map<string, number>();
  for (const line of block.split("\n")) {
    const match = /^( {2}-\S(?:.*?\S)?) {2,}(?=\S)/.exec(line);
    if (match !== null) columns.set(match[1]!.trim(), match[0].length);
  }
  return columns;
}

describe("serve --help", () => {
  it("aligns every option of its Options block, policy options and -h included, in one column", async () => {
    const { code, stdout } = await runMain(["serve", "--help"]);
    expect(code).toBe(0);
    const options = stdout.slice(stdout.indexOf("Options:"), stdout.indexOf("Notifications"));
    const columns = descriptionColumns(options);
    expect([...columns.keys()]).toEqual(expect.arrayContaining(["--listen HOST:PORT", "--policy FILE", "--audit-file PATH", "-h, --help"]));
    expect(new Set(columns.values()), JSON.stringify([...columns])).toEqual(new Set([columns.get("--listen HOST:PORT")]));
  });

  it("keeps the notification options in a block of their own, aligned among themselves", async () => {
    const { stdout } = await runMain(["serve", "--help"]);
    const notify = stdout.slice(stdout.indexOf("Notifications"), stdout.indexOf("On start"));
    const columns = descriptionColumns(notify);
    expect(columns.has("-h, --help")).toBe(false);
    expect(columns.size).toBeGreaterThan(5);
    expect(new Set(columns.values()).size).toBe(1);
  });
});
