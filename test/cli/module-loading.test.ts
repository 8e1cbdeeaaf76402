/**
 * Each CLI command loads what it runs and nothing else (issue #36): the CLI
 * runs as a real child process (`node --import tsx src/cli/bin.ts …`) with a
 * loader hook (support/record-modules.mjs) that writes down every module the
 * process loads, and each case names the packages its command must not load —
 * the shell parser, YAML and globs without a policy, the MCP and ACP SDKs,
 * grammY, ioredis, web-push, qrcode, selfsigned — and, for commands that talk
 * no RPC, the Connect stack. No timing: only what was loaded.
 *
 * A positive control (`watch --policy`) shows the recorder does see the shell
 * parser when a command does load it, so an absence is not the recorder's
 * blindness.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "src", "cli", "bin.ts");
const RECORDER = join(ROOT, "test", "cli", "support", "record-modules.mjs");
const TOKEN = "3f9a0c1d2e4b5a6978877665544332211";
const SCREEN = join(ROOT, "fixtures", "screens", "dialog-command-1.1.27.txt");
const STEPS = join(ROOT, "fixtures", "steps", "ask_question_done.json");
const POLICY = join(ROOT, "fixtures", "policy", "team-policy.yaml");

/** What a command that answers no policy, serves nothing and relays nothing must never load. */
const EXTRAS = [
  "mvdan-sh",
  "yaml",
  "picomatch",
  "@modelcontextprotocol/sdk",
  "@agentclientprotocol/sdk",
  "grammy",
  "ioredis",
  "web-push",
  "qrcode",
  "selfsigned",
  "playwright-core",
];
/** The RPC stack: commands that talk to no language server must not pay for it. */
const RPC_STACK = ["@connectrpc/connect", "@connectrpc/connect-node", "@bufbuild/protobuf"];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Every module URL or path the process loaded. */
  modules: string[];
  /** The npm packages among them (`@scope/name` or `name`). */
  packages: Set<string>;
  /** Our own files among them, relative to src/ (`cli/main.ts`). */
  ours: string[];
  /** Whether the command wrote an audit record (to the private state directory). */
  auditWritten: boolean;
}

function packageOf(module: string): string | undefined {
  const at = module.lastIndexOf("/node_modules/");
  if (at < 0) return undefined;
  const [first, second] = module.slice(at + "/node_modules/".length).split("/");
  return first?.startsWith("@") === true ? `${first}/${second ?? ""}` : first;
}

function ourFile(module: string): string | undefined {
  const path = module.startsWith("file:") ? fileURLToPath(module) : module;
  const src = join(ROOT, "src") + "/";
  return path.startsWith(src) && !path.includes("/node_modules/") ? path.slice(src.length) : undefined;
}

/** Runs `agy-bridge ARGV` from source in a child process with a private HOME, recording what it loads. */
async function runCli(argv: readonly string[], options: { stopWhen?: (stdout: string) => boolean } = {}): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "agy-bridge-modules-"));
  const record = join(dir, "modules.txt");
  try {
    const child = spawn(process.execPath, ["--import", "tsx", "--import", RECORDER, BIN, ...argv], {
      cwd: ROOT,
      // A private HOME and state directory: an answer's audit record lands here, never in a person's log.
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: dir,
        XDG_STATE_HOME: join(dir, "state"),
        XDG_CONFIG_HOME: join(dir, "config"),
        RECORD_MODULES_FILE: record,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      // A command that runs until stopped (serve): stopped as a person would, once it is up.
      if (options.stopWhen?.(stdout) === true) child.kill("SIGINT");
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (exit) => resolve(exit));
    });
    const modules = existsSync(record)
      ? [
          ...new Set(
            readFileSync(record, "utf8")
              .split("\n")
              .filter((l) => l !== ""),
          ),
        ]
      : [];
    const packages = new Set(modules.map(packageOf).filter((p): p is string => p !== undefined));
    const ours = modules.map(ourFile).filter((f): f is string => f !== undefined);
    const auditWritten = existsSync(join(dir, "state", "agy-bridge", "audit.jsonl"));
    return { code, stdout, stderr, modules, packages, ours, auditWritten };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The forbidden packages `run` loaded, with the run's stderr when there are any, so a failure says what happened. */
function loadedOf(run: Run, forbidden: readonly string[]): { loaded: string[]; stderr?: string } {
  const loaded = forbidden.filter((p) => run.packages.has(p));
  return loaded.length === 0 ? { loaded } : { loaded, stderr: run.stderr.slice(0, 2000) };
}

async function withSim<T>(body: (sim: SimServer, conn: string[]) => Promise<T>): Promise<T> {
  const sim = await startSimServer({ speed: 0.05, csrfToken: TOKEN });
  try {
    return await body(sim, ["--url", sim.tlsUrl, "--csrf-token", TOKEN, "--conversation", sim.engine.activeConversationId]);
  } finally {
    await sim.close();
  }
}

const UNREACHABLE = ["--url", "http://127.0.0.1:1", "--csrf-token", TOKEN, "--conversation", "c0ffee00-0000-4000-8000-000000000000"];

// Each case starts a child process through tsx; on a loaded machine that alone can take seconds.
describe("what each CLI command loads", { timeout: 60_000 }, () => {
  it("--help loads no package and none of the layers, only the dispatcher", async () => {
    const run = await runCli(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: agy-bridge <command>");
    expect(run.ours).toContain("cli/main.ts");
    expect([...run.packages].filter((p) => p !== "tsx" && p !== "esbuild")).toEqual([]);
    expect(run.ours.filter((f) => !f.startsWith("cli/") && f !== "errors.ts" && !f.startsWith("util/"))).toEqual([]);
  });

  it("screen --file reads the screen without the RPC stack, the policy layer or any front door", async () => {
    const run = await runCli(["screen", "--file", SCREEN, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.ours.some((f) => f.startsWith("tmux/"))).toBe(true);
    expect(loadedOf(run, [...EXTRAS, ...RPC_STACK])).toEqual({ loaded: [] });
  });

  it("serve without a Telegram bot does not load grammY, and with one it does", async () => {
    const stopWhenUp = { stopWhen: (out: string) => out.includes('"url"') };
    const plain = await runCli(["serve", "--listen", "127.0.0.1:0", "--json"], stopWhenUp);
    expect(plain.stdout, plain.stderr).toContain('"url"');
    expect(plain.ours.some((f) => f.startsWith("notify/"))).toBe(true);
    expect(loadedOf(plain, ["grammy"])).toEqual({ loaded: [] });
    // Positive control: a configured bot loads it (its API root is a closed port; serve keeps running).
    const dir = mkdtempSync(join(tmpdir(), "agy-bridge-tg-"));
    try {
      const tokenFile = join(dir, "bot-token");
      writeFileSync(tokenFile, "123456:TEST-TOKEN\n", { mode: 0o600 });
      const bot = await runCli(
        [
          "serve",
          "--listen",
          "127.0.0.1:0",
          "--json",
          "--telegram-bot-token-file",
          tokenFile,
          "--telegram-chat",
          "42",
          "--telegram-api-root",
          "http://127.0.0.1:1",
        ],
        stopWhenUp,
      );
      expect(bot.stdout, bot.stderr).toContain('"url"');
      expect(bot.packages.has("grammy"), bot.stderr).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("map maps steps without the RPC stack, the policy layer or any front door", async () => {
    const run = await runCli(["map", STEPS]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('"interaction_requested"');
    expect(run.ours.some((f) => f.startsWith("mapper/"))).toBe(true);
    expect(loadedOf(run, [...EXTRAS, ...RPC_STACK])).toEqual({ loaded: [] });
  });

  it.each(["approve", "deny", "interrupt", "watch"])(
    "%s --url against a server that is not there loads RPC but no shell parser, YAML, globs or front door",
    async (command) => {
      const run = await runCli([command, ...UNREACHABLE, "--json"]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.ours).toContain("rpc/client.ts");
      // The client speaks Connect over node:http itself: no Connect library either.
      expect(loadedOf(run, [...EXTRAS, ...RPC_STACK])).toEqual({ loaded: [] });
      // Nothing was answered, so nothing is written: the audit writer is not loaded either (watch keeps it for --policy).
      if (command !== "watch") expect(run.ours.filter((f) => f.startsWith("audit/"))).toEqual([]);
    },
  );

  it("answer --url loads no shell parser, YAML, globs or front door", async () => {
    const run = await runCli(["answer", ...UNREACHABLE, "--option", "1", "--json"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.ours).toContain("rpc/client.ts");
    expect(loadedOf(run, [...EXTRAS, ...RPC_STACK])).toEqual({ loaded: [] });
    expect(run.ours.filter((f) => f.startsWith("audit/"))).toEqual([]);
  });

  it("approve with nothing pending on a live server loads no policy layer and no audit writer", async () => {
    await withSim(async (_sim, conn) => {
      const none = await runCli(["approve", ...conn, "--json"]);
      expect(none.code, none.stderr).toBe(1);
      expect(none.stderr).toMatch(/no permission is pending/);
      expect(loadedOf(none, EXTRAS)).toEqual({ loaded: [] });
      expect(none.ours.filter((f) => f.startsWith("audit/"))).toEqual([]);
    });
  });

  it("approve of a pending gate writes its audit record without loading the policy layer", async () => {
    await withSim(async (sim, conn) => {
      const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => conv.waitingIndices()[0], "the simulator's permission gate", { ms: 10_000, everyMs: 20 });
      const approve = await runCli(["approve", ...conn, "--json"]);
      expect(approve.code, approve.stderr).toBe(0);
      expect(JSON.parse(approve.stdout)).toMatchObject({ result: "delivered" });
      // The answer was written to the audit log: the writer loaded, the policy layer did not.
      expect(approve.auditWritten).toBe(true);
      expect(approve.ours.some((f) => f.startsWith("audit/"))).toBe(true);
      expect(loadedOf(approve, EXTRAS)).toEqual({ loaded: [] });
    });
  });

  it("watch --policy does load the policy layer and its shell parser (the recorder sees what is loaded)", async () => {
    const run = await runCli(["watch", ...UNREACHABLE, "--json", "--policy", POLICY]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.packages.has("mvdan-sh")).toBe(true);
    expect(run.packages.has("yaml")).toBe(true);
    expect(run.ours.some((f) => f.startsWith("policy/"))).toBe(true);
  });
});
