import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkLayers } from "./layer-rules.js";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");

function sourceTree(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name.endsWith(".test.ts")) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(SRC, path).split("\\").join("/"), readFileSync(path, "utf8"));
  }
  return files;
}

describe("layer rules", () => {
  it("finds no import that breaks the layer direction in src/", () => {
    const tree = sourceTree();
    expect(tree.size).toBeGreaterThan(20);
    expect(checkLayers(tree)).toEqual([]);
  });

  it("reports a mapper that imports rpc, a protocol file that imports the mapper and a library file that imports cli", () => {
    const tree = new Map([
      ["mapper/a.ts", 'import { x } from "../rpc/client.js";\nimport { y } from "../protocol/json.js";'],
      ["protocol/b.ts", 'import type { Z } from "../mapper/events.js";'],
      ["session/c.ts", 'export { main } from "../cli/main.js";'],
      ["server/d.ts", 'const m = await import("../rpc/client.js");'],
    ]);
    expect(checkLayers(tree).map((v) => `${v.file}: ${v.reason}`)).toEqual([
      "mapper/a.ts: mapper/ may not import rpc/",
      "protocol/b.ts: protocol/ may not import mapper/",
      "session/c.ts: session/ may not import cli/",
      "server/d.ts: server/ may not import rpc/",
    ]);
  });

  it("reports node: imports and the clock in the pure layers", () => {
    const tree = new Map([["mapper/e.ts", 'import { readFileSync } from "node:fs";\nconst t = Date.now();']]);
    expect(checkLayers(tree).map((v) => v.reason)).toEqual([
      "mapper/ is pure and may not use Node built-ins",
      "mapper/ is pure: no clock, randomness, console or process",
    ]);
  });
});
