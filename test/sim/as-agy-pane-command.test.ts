/**
 * `agy-bridge sim --as-agy` in a real tmux pane (private socket): tmux reports
 * the pane's `#{pane_current_command}` as `agy`, as it does for a real agy
 * pane (docs/spike-notes.md §14 #10) — tmux names a pane
 * after the leader of the terminal's foreground process group — and the TUI
 * under the launcher still takes keys and quits cleanly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

let tmux: PrivateTmux;
let cacheDir: string;

beforeAll(() => {
  tmux = createPrivateTmux();
  cacheDir = mkdtempSync(join(tmpdir(), "agy-pane-cmd-"));
});

afterAll(async () => {
  await tmux.kill();
  rmSync(cacheDir, { recursive: true, force: true });
});

describe("sim --as-agy in a tmux pane", () => {
  it("is reported as agy by #{pane_current_command}, takes keys, and exits 0 when the TUI quits", async () => {
    await tmux.newSession("asagy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--speed", "0", "--tui-version", "1.2"], {
      cwd: ROOT,
      columns: 120,
      rows: 40,
      env: { AGY_BRIDGE_CACHE_DIR: cacheDir },
    });
    await tmux.waitForScreen("asagy", (s) => s.includes("? for shortcuts"), "the TUI under the launcher", 60_000);
    let command = "";
    await until(
      async () => {
        command = (await tmux.run(["display-message", "-p", "-t", "asagy", "#{pane_current_command}"])).trim();
        return command === "agy" || undefined;
      },
      "tmux to report the pane's command as agy",
      { seen: () => command },
    );
    // The foreground group still owns the terminal: keys reach the TUI.
    await tmux.sendKeys("asagy", "-l", "hello");
    await tmux.waitForScreen("asagy", (s) => s.includes("> hello"), "the typed draft");
    await tmux.sendKeys("asagy", "C-u");
    await tmux.waitForScreen("asagy", (s) => /^>\s*$/m.test(s), "the empty composer");
    await tmux.sendKeys("asagy", "C-c");
    let exit: { status?: number; signal?: number } | undefined;
    let screen = "";
    await until(
      async () => {
        exit = await tmux.paneExit("asagy");
        screen = await tmux.capture("asagy");
        return exit;
      },
      "the pane's program to exit",
      { seen: () => `a running pane showing:\n${screen}` },
    );
    expect(exit, `screen:\n${screen}`).toEqual({ status: 0 });
  });
});
