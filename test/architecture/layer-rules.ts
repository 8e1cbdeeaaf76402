/**
 * The import rules of the layers (docs/architecture.md), as data and one pure
 * checker, so the rules are enforced by the test suite rather than only written.
 *
 *   protocol ← rpc, mapper, sim, tmux ← discovery ← session ← server ← cli
 *
 * `errors.ts` and `util/` may be imported by everyone and import only each other.
 */
import { posix } from "node:path";

/** For each layer, the layers it may import (besides itself, `errors` and `util`). */
export const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  errors: ["util"],
  util: [],
  protocol: [],
  rpc: ["protocol"],
  mapper: ["protocol"],
  policy: ["mapper", "protocol"],
  // The auditor folds what it observes with the session layer's interaction ledger.
  audit: ["mapper", "policy", "protocol", "session"],
  sim: ["protocol"],
  discovery: ["rpc", "tmux", "protocol"],
  tmux: ["protocol"],
  session: ["rpc", "mapper", "discovery", "tmux", "protocol", "policy"],
  // Notifications fold what they hear with the session layer's interaction ledger (session/interaction-ledger.ts).
  notify: ["mapper", "protocol", "session"],
  server: ["session", "mapper", "protocol", "policy", "audit", "notify"],
  mcp: ["session", "mapper", "protocol", "policy", "audit"],
  acp: ["session", "mapper", "protocol", "policy", "audit"],
  fleet: ["session", "mapper", "protocol", "policy", "audit"],
  // Recording reads agy (rpc, discovery) and its pane (tmux), and maps what it read (mapper).
  capture: ["rpc", "discovery", "tmux", "mapper", "protocol"],
  index: ["rpc", "mapper", "discovery", "tmux", "session", "server", "protocol", "policy", "audit"],
  cli: ["rpc", "mapper", "discovery", "tmux", "session", "server", "protocol", "sim", "index", "policy", "audit", "mcp", "acp", "notify", "fleet", "capture"],
};

/** Layers whose files must not touch Node built-ins, the clock or randomness. */
export const PURE = new Set(["mapper", "protocol", "policy"]);

/**
 * Folders that are pure inside a layer that is not: capture's redaction is
 * text in, text out, so it is tested on its own and may import only pure code.
 */
export const PURE_DIRS = ["capture/redaction/"];

function isPureFile(file: string): boolean {
  return PURE.has(layerOf(file)) || PURE_DIRS.some((dir) => file.startsWith(dir));
}

/** `src/rpc/client.ts` → `rpc`; `src/index.ts` → `index`; `src/errors.ts` → `errors`. */
export function layerOf(srcRelativePath: string): string {
  const [head, ...rest] = srcRelativePath.split("/");
  if (rest.length === 0) return (head ?? "").replace(/\.[jt]s$/, "");
  return head ?? "";
}

export interface Violation {
  file: string;
  imports: string;
  reason: string;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Checks every file of `src/` (paths relative to `src/`, without test files) against the rules. */
export function checkLayers(files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const from = layerOf(file);
    const allowed = ALLOWED[from];
    if (allowed === undefined) {
      out.push({ file, imports: "", reason: `"${from}" is not a known layer; add it to the rules` });
      continue;
    }
    for (const match of source.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? "";
      const pureDir = PURE_DIRS.find((dir) => file.startsWith(dir));
      if (isPureFile(file) && spec.startsWith("node:")) {
        out.push({ file, imports: spec, reason: `${pureDir ?? `${from}/`} is pure and may not use Node built-ins` });
      }
      if (!spec.startsWith(".")) continue;
      const target = posix.normalize(posix.join(posix.dirname(file), spec));
      if (target.startsWith("..")) {
        out.push({ file, imports: spec, reason: "reaches outside src/" });
        continue;
      }
      const to = layerOf(target);
      if (pureDir !== undefined && to !== "errors" && !isPureFile(target)) {
        out.push({ file, imports: spec, reason: `${pureDir} is pure and may import only pure code` });
        continue;
      }
      if (to === from || to === "errors" || to === "util") continue;
      if (!allowed.includes(to)) out.push({ file, imports: spec, reason: `${from}/ may not import ${to}/` });
    }
    if (isPureFile(file) && /\bDate\.now\(|new Date\(|Math\.random\(|\bconsole\.|\bprocess\./.test(source)) {
      out.push({
        file,
        imports: "",
        reason: `${PURE_DIRS.find((dir) => file.startsWith(dir)) ?? `${from}/`} is pure: no clock, randomness, console or process`,
      });
    }
  }
  return out;
}
