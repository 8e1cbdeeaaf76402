/**
 * What an installer gets: the MIT licence file package.json names, no script
 * that runs (and may fail or warn) when the package is installed, `npm pack`
 * still building dist/, and source maps whose sources ship beside them, so a
 * stack trace points at files that exist. The file list is npm's own
 * (`npm pack --dry-run --json`, scripts skipped: nothing is built here).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

interface Manifest {
  license: string;
  files: string[];
  scripts: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;

function packedFiles(): Set<string> {
  const npm = process.env.npm_execpath;
  const args = ["pack", "--dry-run", "--json", "--ignore-scripts"];
  const result =
    npm !== undefined && npm.endsWith(".js")
      ? spawnSync(process.execPath, [npm, ...args], { cwd: ROOT, encoding: "utf8" })
      : spawnSync("npm", args, { cwd: ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm pack --dry-run failed (${result.status}): ${result.stderr}`);
  const [pack] = JSON.parse(result.stdout) as Array<{ files: Array<{ path: string }> }>;
  return new Set((pack?.files ?? []).map((f) => f.path));
}

function tsSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsSources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [relative(ROOT, path).split("\\").join("/")] : [];
  });
}

describe("the published package", () => {
  it("carries the MIT licence its package.json names", () => {
    expect(manifest.license).toBe("MIT");
    const text = readFileSync(join(ROOT, "LICENSE"), "utf8");
    expect(text.startsWith("MIT License\n")).toBe(true);
    expect(text).toMatch(/^Copyright \(c\) \d{4} agy-bridge contributors$/m);
    expect(packedFiles().has("LICENSE")).toBe(true);
  });

  it("runs nothing when installed, and builds dist/ when packed", () => {
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(manifest.scripts[hook]).toBeUndefined();
    expect(manifest.scripts.prepack).toBe("npm run build");
  });

  it("ships the sources its source maps point at", () => {
    const packed = packedFiles();
    // dist's maps name ../src/…: every compiled source must be in the package.
    for (const source of tsSources(join(ROOT, "src"))) expect({ source, packed: packed.has(source) }).toEqual({ source, packed: true });
    // When dist/ has been built, every map it ships resolves to a shipped file.
    for (const map of [...packed].filter((p) => p.endsWith(".js.map") && existsSync(join(ROOT, p)))) {
      const { sources } = JSON.parse(readFileSync(join(ROOT, map), "utf8")) as { sources: string[] };
      for (const source of sources) {
        const target = posix.normalize(posix.join(dirname(map).split("\\").join("/"), source));
        expect({ map, target, packed: packed.has(target) }).toEqual({ map, target, packed: true });
      }
    }
  });
});
