/**
 * Every key agy-bridge sends into agy's TUI is chosen from the key table
 * (src/tmux/key-table.ts). The compiler holds most of it: the pane adapters
 * that press keys (`PromptPane.sendKeys`, `TurnPane.sendKeys`) take only
 * `ChosenKey`s, and only key-table.ts makes one. This test holds the rest,
 * over the source: no other file makes a `ChosenKey`, nothing outside the
 * driver runs tmux `send-keys`, and the driver's raw `sendKeys` is reached
 * from src/ only through those adapters.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** The library's files: the simulator plays agy and reads keys, it never sends any. */
const LIBRARY = files(SRC)
  .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }))
  .filter((f) => !f.path.startsWith("src/sim/"));

/** Lines of `text` matching `pattern`, without comments. */
function codeLines(text: string, pattern: RegExp): string[] {
  return text
    .split("\n")
    .filter((line) => !/^\s*(\*|\/\/|\/\*\*)/.test(line))
    .filter((line) => pattern.test(line));
}

function where(pattern: RegExp): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const f of LIBRARY) {
    const lines = codeLines(f.text, pattern).map((l) => l.trim());
    if (lines.length > 0) found[f.path] = lines;
  }
  return found;
}

describe("every key goes through the key table", () => {
  it("only key-table.ts makes a ChosenKey", () => {
    expect(Object.keys(where(/as ChosenKey\b/))).toEqual(["src/tmux/key-table.ts"]);
  });

  it("tmux send-keys runs in the driver only, with the names of chosen keys or the raw method's own argument", () => {
    expect(where(/"send-keys"/)).toEqual({
      "src/tmux/tmux-driver.ts": [
        'await this.run(["send-keys", "-t", paneTarget(target), ...keys], options);',
        'sendKeys: (keys, signal) => this.run(["send-keys", "-t", paneTarget(target), ...keyNames(keys)], { signal }).then(() => undefined),',
      ],
    });
  });

  it("the driver's raw sendKeys is reached only by the prompt adapter, with chosen keys", () => {
    const calls = where(/\.sendKeys\(/);
    expect(calls["src/tmux/tmux-driver.ts"]).toEqual(["sendKeys: (keys, signal) => this.sendKeys(target, keyNames(keys), { signal }),"]);
    // The other calls are the adapters' own: their parameter type is ChosenKey[], so the compiler checks them.
    for (const [path, lines] of Object.entries(calls)) {
      if (path === "src/tmux/tmux-driver.ts") continue;
      expect(["src/tmux/tui-prompt.ts", "src/tmux/deliver-turn.ts"], `${path}: ${lines.join(" | ")}`).toContain(path);
    }
    for (const path of ["src/tmux/tui-prompt.ts", "src/tmux/deliver-turn.ts"]) {
      const text = readFileSync(join(ROOT, path), "utf8");
      expect(text).toMatch(/sendKeys\(keys: readonly ChosenKey\[\], signal\?: AbortSignal\): Promise<void>;/);
    }
  });

  it("no library file outside src/tmux presses keys itself", () => {
    const outside = Object.keys(where(/\bsendKeys\(|"send-keys"|send-keys/)).filter((path) => !path.startsWith("src/tmux/"));
    expect(outside).toEqual([]);
  });
});
