/**
 * Only `--notify-desktop` pays for the D-Bus library: `watch` runs as a real
 * child process with the module recorder of test/cli/module-loading.test.ts,
 * once without the flag (it must not load `@particle/dbus-next`) and once
 * with it on a private bus (it must: the positive control).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startNotificationsStandIn, startPrivateBus } from "./support/dbus-session.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "src", "cli", "bin.ts");
const RECORDER = join(ROOT, "test", "cli", "support", "record-modules.mjs");

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function loadedBy(argv: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; dbus: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), "agyb-desktop-modules-"));
  const record = join(dir, "modules.txt");
  try {
    const child = spawn(process.execPath, ["--import", "tsx", "--import", RECORDER, BIN, ...argv], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: dir, XDG_STATE_HOME: dir, XDG_CONFIG_HOME: dir, RECORD_MODULES_FILE: record, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise<number | null>((done, fail) => {
      child.once("error", fail);
      child.once("close", (exit) => done(exit));
    });
    const modules = existsSync(record) ? readFileSync(record, "utf8") : "";
    return { code, stderr, dbus: modules.includes("/node_modules/@particle/dbus-next/") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("loading the D-Bus library", { timeout: 90_000 }, () => {
  it("watch loads it only with --notify-desktop", async () => {
    const bus = await startPrivateBus();
    cleanup.push(() => bus.close());
    const server = await startNotificationsStandIn(bus.address);
    cleanup.push(() => server.close());
    // Nothing listens there: watch checks its flags, then fails to attach (exit 1) — after the desktop check.
    const args = ["watch", "--url", "http://127.0.0.1:1", "--conversation", "c0ffee00-0000-4000-8000-000000000000"];
    const env = { DBUS_SESSION_BUS_ADDRESS: bus.address };

    const without = await loadedBy(args, env);
    expect(without.code, without.stderr).toBe(1);
    expect(without.dbus).toBe(false);

    const withFlag = await loadedBy([...args, "--notify-desktop"], env);
    expect(withFlag.stderr).toContain("desktop alerts go to stand-in");
    expect(withFlag.code, withFlag.stderr).toBe(1);
    expect(withFlag.dbus).toBe(true);
  });
});
