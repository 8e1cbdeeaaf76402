/**
 * The house format and the function-length limit, checked by Biome on every
 * run of the suite: `biome.json` sets a print width of 160 and, for `src/`,
 * fails any function whose body is over 100 lines (blank lines not counted).
 * `npm run format` rewrites the tree; this test only reads it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIOME = join(ROOT, "node_modules", "@biomejs", "biome", "bin", "biome");

function biome(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIOME, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("format and function length (Biome)", () => {
  it("finds the tree formatted and no function in src/ over 100 lines", async () => {
    const result = await biome(["ci", "--reporter=summary", "--colors=off", "--max-diagnostics=50"], ROOT);
    expect(result.code, `run \`npm run format\`, and split the functions named here:\n${result.output}`).toBe(0);
    expect(result.output).toMatch(/Checked \d+ files?/);
  }, 90_000);

  it("fails a function whose body is over 100 lines, so the check above can fail", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agy-bridge-biome-"));
    try {
      const body = Array.from({ length: 101 }, (_, i) => `  total += ${i};`).join("\n");
      writeFileSync(join(dir, "long.ts"), `export function long(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`);
      writeFileSync(
        join(dir, "biome.json"),
        JSON.stringify({
          linter: { rules: { recommended: false, complexity: { noExcessiveLinesPerFunction: { level: "error", options: { maxLines: 100 } } } } },
        }),
      );
      const result = await biome(["lint", "--colors=off", "long.ts"], dir);
      expect(result.code, result.output).not.toBe(0);
      expect(result.output).toContain("noExcessiveLinesPerFunction");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
