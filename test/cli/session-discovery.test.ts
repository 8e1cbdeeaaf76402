/**
 * `watch` and `approve` with only `--conversation`: discovery finds the
 * simulated agy (`sim --as-agy`, the launcher's process shape) among two
 * running on this machine, through the real /proc.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { MapperEventSchema } from "../../src/mapper/index.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { startMain } from "../support/cli-io.js";
import { firstLine } from "../support/first-line.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
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

interface AgyInfo {
  conversationId: string;
  plainUrl: string;
  token: string;
}

async function startAgy(token: string): Promise<AgyInfo> {
  const cache = mkdtempSync(join(tmpdir(), "agyb-session-disc-"));
  dirs.push(cache);
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/bin.ts", "sim", "--as-agy", "--headless", "--speed", "0.05", "--csrf_token", token], {
    cwd: ROOT,
    env: { ...process.env, AGY_BRIDGE_CACHE_DIR: cache },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const line = await firstLine(child.stdout!, "the simulated agy", 30_000);
  const info = JSON.parse(line) as { conversationId: string; plainUrl: string };
  return { ...info, token };
}

describe("session commands with discovery", () => {
  it("watches and approves by conversation id alone, picking the right agy of two", async () => {
    const [, b] = await Promise.all([startAgy("aaaa1111bbbb2222cccc3333dddd4444"), startAgy("eeee5555ffff6666aaaa7777bbbb8888")]);
    const watch = startMain(["watch", "--conversation", b.conversationId, "--json", "--until-idle"]);
    await until(() => watch.stderr().includes("following") || watch.stderr().includes("agy-bridge watch:"), "watch to attach");
    expect(watch.stderr()).toContain(`following ${b.conversationId}`);
    const client = createAgyRpcClient({ baseUrl: b.plainUrl, csrfToken: b.token });
    try {
      await client.sendUserCascadeMessage({ conversationId: b.conversationId, text: "Run pwd", planModel: "MODEL_PLACEHOLDER_M20" });
      await until(
        async () => {
          const all = await client.getAllCascadeTrajectories({});
          return (all.trajectorySummaries?.[b.conversationId]?.waitingSteps?.length ?? 0) > 0;
        },
        "the gate",
        { errors: "throw" },
      );
    } finally {
      await client.close();
    }
    const approve = startMain(["approve", "--conversation", b.conversationId, "--json"]);
    expect(await approve.code, approve.stderr()).toBe(0);
    expect(JSON.parse(approve.stdout())).toMatchObject({ result: "delivered" });
    expect(await watch.code, watch.stderr()).toBe(0);
    const events = watch
      .stdout()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => MapperEventSchema.parse(JSON.parse(l)));
    expect(events.find((e) => e.type === "function_call_output")).toMatchObject({ output: "/home/sim/project\n" });
    expect(events.every((e) => e.conversationId === b.conversationId)).toBe(true);
    for (const text of [watch.stdout(), watch.stderr(), approve.stdout(), approve.stderr()]) expect(text).not.toContain(b.token);
  }, 90_000);
});
