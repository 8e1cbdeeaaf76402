/**
 * The CLI as installed: package.json's `bin` is the esbuild bundle that
 * `npm run build` writes to dist/bin/ (scripts/bundle-cli.mjs). The rest of
 * the suite runs the CLI from source, so here the bundle itself is built
 * (into a private directory under .tmp/, two levels below the root as
 * dist/bin is) and run as a real process: its version, `map` byte for byte against the
 * source, the simulator's shipped scenarios, an answer over RPC, the served
 * page with its vendored scripts, and `--help` still loading no package.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";
import { firstLine } from "../support/first-line.js";
import { runProcess, type RanProcess } from "../support/run-process.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RECORDER = join(ROOT, "test", "cli", "support", "record-modules.mjs");
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};
// Under .tmp/ (ignored by git and not packed), two levels below the root as dist/bin is.
const OUT = `.tmp/bundled-cli-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const BIN = join(ROOT, OUT, "agy-bridge.js");

/** Runs the bundled CLI to its end; `env` adds to a private HOME and state. */
async function run(argv: readonly string[], options: { env?: Record<string, string>; node?: readonly string[] } = {}): Promise<RanProcess> {
  const home = mkdtempSync(join(tmpdir(), "agy-bridge-bundle-"));
  try {
    return await runProcess(process.execPath, [...(options.node ?? []), BIN, ...argv], {
      cwd: home,
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: home,
        XDG_STATE_HOME: join(home, "state"),
        XDG_CONFIG_HOME: join(home, "config"),
        ...options.env,
      },
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Starts a long-running bundled command and resolves with its first stdout line and the child. */
async function started(argv: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<never>((_, reject) =>
    child.once("close", (code) => reject(new Error(`${argv.join(" ")} exited ${code} before its first line; stderr: ${stderr}`))),
  );
  // Its later exit (at stop) must not surface as an unhandled rejection.
  exited.catch(() => undefined);
  const line = await Promise.race([firstLine(child.stdout, argv.join(" "), 30_000, () => `stderr: ${stderr}`), exited]);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((resolve) => child.once("close", resolve));
    child.kill("SIGTERM");
    await closed;
  };
  return { line, stop };
}

beforeAll(() => {
  const built = spawnSync(process.execPath, [join(ROOT, "scripts", "bundle-cli.mjs"), "--outdir", OUT], { cwd: ROOT, encoding: "utf8" });
  expect({ status: built.status, stderr: built.stderr }).toEqual({ status: 0, stderr: "" });
}, 60_000);
afterAll(() => rmSync(join(ROOT, OUT), { recursive: true, force: true }));

describe("the bundled CLI (package.json bin)", { timeout: 60_000 }, () => {
  it("is what package.json's bin names and what the build writes", () => {
    expect(manifest.bin["agy-bridge"]).toBe("dist/bin/agy-bridge.js");
    expect(manifest.scripts["build"]).toContain("node scripts/bundle-cli.mjs");
    expect(readFileSync(BIN, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    for (const asset of ["approval-page.html", "agy-launcher.c"]) expect(existsSync(join(ROOT, OUT, asset)), asset).toBe(true);
  });

  it("prints the package's version and maps a snapshot byte for byte as the source does", async () => {
    const version = await run(["--version"]);
    expect(version).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: "" });
    const file = join(ROOT, "fixtures", "steps", "snapshot_two_turns.json");
    const bundled = await run(["map", file]);
    const stdin = new PassThrough();
    stdin.end();
    const source = await runMain(["map", file], { stdin });
    expect(bundled.code).toBe(0);
    expect(bundled.stdout.split("\n").length).toBeGreaterThan(10);
    expect(bundled).toEqual({ code: source.code, stdout: source.stdout, stderr: source.stderr });
  });

  it("runs the simulator on its shipped scenarios and approves the gate they raise over RPC", async () => {
    const sim = await started(["sim", "--headless", "--csrf-token", "bundle-test-token"]);
    try {
      const { conversationId, tlsUrl } = JSON.parse(sim.line) as { conversationId: string; tlsUrl: string };
      const approve = await run(["approve", "--url", tlsUrl, "--csrf-token", "bundle-test-token", "--conversation", conversationId, "--json"]);
      expect(approve.code, approve.stderr).toBe(1);
      expect(JSON.parse(approve.stdout)).toEqual({ result: "none_pending", pending: [] });
      expect(approve.stderr).not.toContain("bundle-test-token");
      // A turn the shipped scenarios answer with a command gate, approved by the bundled CLI.
      const { plainUrl } = JSON.parse(sim.line) as { plainUrl: string };
      const sent = await fetch(`${plainUrl}/exa.language_server_pb.LanguageServerService/SendUserCascadeMessage`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-codeium-csrf-token": "bundle-test-token" },
        body: JSON.stringify({
          cascadeId: conversationId,
          items: [{ text: "Run pwd" }],
          cascadeConfig: { plannerConfig: { planModel: "MODEL_PLACEHOLDER_M20" } },
        }),
      });
      expect(sent.status).toBe(200);
      const seen: string[] = [];
      for (const deadline = Date.now() + 30_000; ; ) {
        const answer = await run(["approve", "--url", tlsUrl, "--csrf-token", "bundle-test-token", "--conversation", conversationId, "--json"]);
        seen.push(answer.stdout.trim());
        if (answer.code === 0) {
          expect(JSON.parse(answer.stdout)).toMatchObject({ result: "delivered" });
          break;
        }
        if (Date.now() > deadline) throw new Error(`no gate to approve within 30 s; approve printed: ${seen.join(" | ")}`);
      }
    } finally {
      await sim.stop();
    }
  });

  it("serves the approval page with its vendored scripts inlined", async () => {
    const serve = await started(["serve", "--listen", "127.0.0.1:0", "--json"], { AGY_BRIDGE_TOKEN: "bundle-test-bearer-token-0123456789" });
    try {
      const { url } = JSON.parse(serve.line) as { url: string };
      const page = await fetch(`${url}/`);
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(html).toContain("<!doctype html>");
      expect(html).toContain("DOMPurify");
      expect(html).not.toContain("<!-- vendor-scripts -->");
    } finally {
      await serve.stop();
    }
  });

  it("loads no package for --help, yet does for a command that needs one (the recorder sees them)", async () => {
    const packagesOf = async (argv: string[]): Promise<string[]> => {
      const dir = mkdtempSync(join(tmpdir(), "agy-bridge-bundle-modules-"));
      try {
        const record = join(dir, "modules.txt");
        const ran = await run(argv, { node: ["--import", RECORDER], env: { RECORD_MODULES_FILE: record } });
        expect(ran.code, ran.stderr).toBe(0);
        const lines = existsSync(record) ? readFileSync(record, "utf8").split("\n") : [];
        return [...new Set(lines.filter((l) => l.includes("/node_modules/")).map((l) => l.split("/node_modules/").pop()?.split("/")[0] ?? ""))];
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    expect(await packagesOf(["--help"])).toEqual([]);
    // A positive control: `policy check` reads YAML and parses the command line with mvdan-sh.
    const policy = join(ROOT, "fixtures", "policy", "team-policy.yaml");
    expect(await packagesOf(["policy", "check", policy, "--json", "--", "ls", "-la"])).toEqual(expect.arrayContaining(["mvdan-sh"]));
  });
});
