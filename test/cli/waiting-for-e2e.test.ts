/**
 * What a session waits for, end to end: the simulated agy (`sim --as-agy`)
 * asks to run a command, and `watch --json` (its `status` event), the watch
 * human line and `sessions --json` (each a real CLI process) all say
 * `permission`.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { firstLine } from "../support/first-line.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TOKEN = "abcd1111efef2222abcd3333efef4444";
const run = promisify(execFile);
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once("close", r));
      child.kill("SIGTERM");
      await gone;
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; stdout(): string; stderr(): string } {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/bin.ts", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => (out += String(chunk)));
  child.stderr!.on("data", (chunk) => (err += String(chunk)));
  return { child, stdout: () => out, stderr: () => err };
}

function events(text: string): MapperEvent[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => MapperEventSchema.parse(JSON.parse(line)));
}

interface ListedConversation {
  conversationId: string;
  waitingSteps: number[];
  waitingFor?: string;
}

async function listedConversation(conversationId: string, env: NodeJS.ProcessEnv): Promise<ListedConversation | undefined> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli/bin.ts", "sessions", "--json"], { cwd: ROOT, env, timeout: 60_000 });
  const servers = JSON.parse(stdout) as Array<{ conversations: ListedConversation[] }>;
  return servers.flatMap((s) => s.conversations).find((c) => c.conversationId === conversationId);
}

describe("waitingFor end to end", () => {
  it("says permission on the waiting status event, in watch's line and in sessions --json while agy asks to run a command", async () => {
    const cache = mkdtempSync(join(tmpdir(), "agyb-waiting-for-"));
    dirs.push(cache);
    const env = { ...process.env, AGY_BRIDGE_CACHE_DIR: cache };
    const agy = cli(["sim", "--as-agy", "--headless", "--speed", "0.05", "--csrf_token", TOKEN], env);
    const { conversationId, plainUrl } = JSON.parse(await firstLine(agy.child.stdout!, "the simulated agy", 30_000, agy.stderr)) as {
      conversationId: string;
      plainUrl: string;
    };
    const base = ["--conversation", conversationId, "--url", plainUrl, "--csrf-token", TOKEN];
    const json = cli(["watch", ...base, "--json"], env);
    const human = cli(["watch", ...base], env);
    const attached = (w: typeof json) => w.stderr().includes("following") || w.child.exitCode !== null;
    await until(() => attached(json) && attached(human), "both watches to attach", { ms: 30_000, seen: () => `${json.stderr()}\n${human.stderr()}` });

    const client = createAgyRpcClient({ baseUrl: plainUrl, csrfToken: TOKEN });
    try {
      await client.sendUserCascadeMessage({ conversationId, text: "Run pwd", planModel: "MODEL_PLACEHOLDER_M20" });
    } finally {
      await client.close();
    }

    const waiting = await until(() => events(json.stdout()).find((e) => e.type === "status" && e.status === "waiting"), "the waiting status event", {
      ms: 30_000,
      seen: () => `${json.stdout()}\n${json.stderr()}`,
    });
    expect(waiting).toMatchObject({ type: "status", status: "waiting", reason: "interaction_pending", waitingFor: "permission" });
    await until(() => human.stderr().includes("— for permission") || human.stdout().includes("— for permission"), "watch's human waiting line", {
      ms: 30_000,
      seen: () => `${human.stdout()}\n${human.stderr()}`,
    });
    expect(`${human.stdout()}${human.stderr()}`).toMatch(/\[status\] waiting \(interaction pending\) — for permission/);

    const listed = await listedConversation(conversationId, env);
    expect(listed, "sessions --json lists the simulated conversation").toBeDefined();
    expect(listed).toMatchObject({ conversationId, waitingFor: "permission" });
    expect(listed!.waitingSteps.length).toBeGreaterThan(0);
  }, 120_000);
});
