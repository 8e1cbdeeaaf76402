import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index.js";
import * as protocol from "../../src/protocol/index.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SRC = join(REPO, "src");

/** Every runtime name the root export publishes. Adding one is a deliberate API change. */
const ROOT_RUNTIME_EXPORTS = [
  "AgyBridgeError",
  "AgySession",
  "DEFAULT_WATCH_BACKOFF",
  "createAuditLog",
  "createSessionAuditor",
  "defaultAuditPath",
  "readAuditLog",
  "runPolicy",
  "DiscoveryError",
  "MapperEventSchema",
  "RpcError",
  "TmuxError",
  "assertLoopbackUrl",
  "callIdFor",
  "createAgyRpcClient",
  "createSummariesBoard",
  "createInteractionLedger",
  "createTmuxDriver",
  "createTrajectoryTracker",
  "discoverServers",
  "findServer",
  "interactionIdFor",
  "isAgyBridgeError",
  "isLoopbackHost",
  "messageIdFor",
  "readScreen",
  "watchAgentStateUpdates",
  "currentWaitingFor",
  "waitingForRequest",
];

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Static imports that load a module at run time (`import type` / `export type` are erased). */
const STATIC_IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^;'"]*?from\s+["']([^"']+)["']/g;

/** Files reachable from `entry` through relative imports (static and dynamic, or static only), and the packages they name. */
function importGraph(entry: string, pattern: RegExp = IMPORT): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    for (const match of readFileSync(file, "utf8").matchAll(pattern)) {
      const spec = match[1] ?? match[2] ?? "";
      if (!spec.startsWith(".")) {
        packages.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] ?? spec));
        continue;
      }
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      if (!existsSync(target)) throw new Error(`${relative(REPO, file)} imports ${spec}, which does not resolve to a .ts file`);
      queue.push(target);
    }
  }
  return { files, packages };
}

describe("public API", () => {
  it("publishes exactly the listed runtime names from the root", () => {
    expect(Object.keys(root).sort()).toEqual([...ROOT_RUNTIME_EXPORTS].sort());
  });

  it("keeps wire internals out of the root and publishes them from agy-bridge/protocol", () => {
    const internals = ["HEADER_BYTES", "EnvelopeDecoder", "encodeEnvelope", "METHODS", "STEP_TYPE", "StepSchema", "StreamUpdateSchema", "isObject"];
    const rootNames = new Set(Object.keys(root));
    expect(internals.filter((name) => rootNames.has(name))).toEqual([]);
    expect(internals.filter((name) => !(name in protocol))).toEqual([]);
    expect(Object.keys(root).filter((name) => name.endsWith("Schema") && name !== "MapperEventSchema")).toEqual([]);
  });

  it("reaches neither selfsigned nor the simulator nor the CLI from the root export", () => {
    const { files, packages } = importGraph(join(SRC, "index.ts"));
    expect(files.size).toBeGreaterThan(10);
    expect([...packages].filter((name) => name === "selfsigned")).toEqual([]);
    const layers = [...files].map((file) => relative(SRC, file).split(/[\\/]/)[0]);
    expect(layers.filter((layer) => layer === "sim" || layer === "cli")).toEqual([]);
  });

  it("loads the policy's shell parser only when a policy is applied (a dynamic import), never on import", () => {
    expect(importGraph(join(SRC, "index.ts"), STATIC_IMPORT).packages.has("mvdan-sh")).toBe(false);
    expect(importGraph(join(SRC, "policy", "index.ts"), STATIC_IMPORT).packages.has("mvdan-sh")).toBe(true);
  });

  it("does reach selfsigned from agy-bridge/sim, so the graph walk can see it", () => {
    expect(importGraph(join(SRC, "sim", "index.ts")).packages.has("selfsigned")).toBe(true);
  });

  it("maps each package.json export to a source entry that exists", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; import: string }>;
      bin: Record<string, string>;
    };
    expect(Object.keys(pkg.exports).sort()).toEqual([".", "./fleet", "./policy", "./protocol", "./sim"]);
    // The bin is the CLI's bundle (scripts/bundle-cli.mjs), built from src/cli/bin.ts.
    expect(pkg.bin).toEqual({ "agy-bridge": "dist/bin/agy-bridge.js" });
    const bundleEntry = readFileSync(join(REPO, "scripts", "bundle-cli.mjs"), "utf8");
    expect(bundleEntry).toContain('entryPoints: { "agy-bridge": "src/cli/bin.ts" }');
    const sources = [...Object.values(pkg.exports).map((entry) => entry.import), "dist/cli/bin.js"].map((path) =>
      join(REPO, path.replace(/^\.?\/?dist\//, "src/").replace(/\.js$/, ".ts")),
    );
    expect(sources.filter((source) => !existsSync(source))).toEqual([]);
    for (const entry of Object.values(pkg.exports)) expect(entry.types).toBe(entry.import.replace(/\.js$/, ".d.ts"));
  });
});
