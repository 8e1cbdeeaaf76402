/**
 * The built CLI (`dist/bin/agy-bridge.js`, the bundle package.json names as its bin), as users run it: benches that time or
 * measure whole processes use it, rebuilt first (`npm run build`, which also
 * copies the page and the launcher source) when any file under src/ is newer
 * than it, so a stale build is never what gets measured.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const cliBin = join(root, "dist", "bin", "agy-bridge.js");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The path of the built CLI, built first when missing or older than src/. */
export function ensureBuiltCli(): string {
  let built = 0;
  try {
    built = statSync(cliBin).mtimeMs;
  } catch {
    // Not built yet.
  }
  if (built >= newestMtime(join(root, "src"))) return cliBin;
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const run = spawnSync(npm, ["run", "--silent", "build"], { cwd: root, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (run.status !== 0) throw new Error(`bench: \`npm run build\` failed (exit ${run.status}): ${run.stderr.slice(-2000)}`);
  statSync(cliBin); // throws when the build produced no CLI
  return cliBin;
}
