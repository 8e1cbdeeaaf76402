#!/usr/bin/env node
/**
 * Runs before `npm run demo` and `npm test` (npm's pre-scripts), so the
 * Quick start is two commands on a fresh clone: it installs the locked
 * dependencies with `npm ci` when node_modules is missing or older than
 * package-lock.json, and does nothing otherwise.
 */
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";

const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};
const lock = mtime("package-lock.json");
const installed = mtime("node_modules/.package-lock.json");
if (lock !== undefined && (installed === undefined || installed < lock)) {
  process.stderr.write("agy-bridge: installing the locked dependencies (npm ci) first…\n");
  const npm = process.env.npm_execpath;
  const result =
    npm !== undefined && npm.endsWith(".js")
      ? spawnSync(process.execPath, [npm, "ci", "--no-audit", "--no-fund"], { stdio: "inherit" })
      : spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write("agy-bridge: npm ci failed; run it yourself to see why, then try again\n");
    process.exit(result.status ?? 1);
  }
}
