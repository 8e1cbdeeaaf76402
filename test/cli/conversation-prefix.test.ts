/**
 * Every command that takes a conversation id accepts the start of one when
 * only one known id starts with it — the 8 characters `audit` prints — and
 * refuses a start two ids share (exit 2, naming both). Through the real CLI:
 * `audit` against a log on disk, `interrupt` and `capture` against the
 * simulator's language server on a loopback socket, and `interrupt` through
 * discovery, against the simulator running as agy (`sim --as-agy`).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matchConversationRef } from "../../src/cli/conversation-ref.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { runMain } from "../support/cli-io.js";
import { firstLine } from "../support/first-line.js";
import { until } from "../support/until.js";

const FIRST = "abcd0001-1111-4111-8111-111111111111";
const SECOND = "abcd0002-2222-4222-8222-222222222222";
const OTHER = "7c1f0a2b-3333-4333-8333-333333333333";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agyb-prefix-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function record(conversationId: string, stepIndex: number, commandLine: string): string {
  return JSON.stringify({
    time: `2026-12-01T09:0${stepIndex}:00.000Z`,
    host: "devbox",
    conversationId,
    stepIndex,
    interactionId: `int_${stepIndex}`,
    kind: "permission",
    request: { commandLine },
    decision: "approve",
    decidedBy: "cli",
    delivery: "delivered",
  });
}

describe("matchConversationRef", () => {
  it("takes a whole known id as itself even when it starts another", () => {
    expect(matchConversationRef("abc", ["abc", "abcdef"])).toBe("abc");
  });

  it("names no id when none starts with the prefix", () => {
    expect(matchConversationRef("ffff", [FIRST, SECOND])).toBeUndefined();
  });
});

describe("agy-bridge audit --conversation", () => {
  it("takes the 8 characters its own table prints, and refuses a start two conversations share, naming both", async () => {
    const file = join(dir, "audit.jsonl");
    writeFileSync(file, `${[record(FIRST, 1, "pwd"), record(OTHER, 2, "ls"), record(SECOND, 3, "rm -rf build")].join("\n")}\n`);

    const table = await runMain(["audit", "--file", file]);
    expect(table.code, table.stderr).toBe(0);
    const printed = /^\S+\s+approve\s+cli\s+delivered\s+(\S+) step 2/m.exec(table.stdout)?.[1];
    expect(printed).toBe(OTHER.slice(0, 8));

    const one = await runMain(["audit", "--file", file, "--conversation", printed!, "--json"]);
    expect([one.code, one.stderr]).toEqual([0, ""]);
    expect(
      one.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { conversationId: string }).conversationId),
    ).toEqual([OTHER]);

    const ambiguous = await runMain(["audit", "--file", file, "--conversation", "abcd"]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stdout).toBe("");
    expect(ambiguous.stderr).toBe(`agy-bridge audit: --conversation is the start of 2 conversation ids (${FIRST}, ${SECOND}); give more of the id\n`);

    const whole = await runMain(["audit", "--file", file, "--conversation", SECOND, "--json"]);
    expect(whole.stdout.trim().split("\n")).toHaveLength(1);
    expect(whole.stdout).toContain("rm -rf build");
  });
});

describe("live commands with --conversation PREFIX", () => {
  let sim: SimServer;
  beforeEach(async () => {
    sim = await startSimServer({ speed: 0.05 });
    sim.engine.startHeadless(FIRST);
    sim.engine.startHeadless(SECOND);
  });
  afterEach(async () => {
    await sim.close();
  });

  it("interrupt denies the gate of the one conversation the prefix names, and the audit log has its whole id", async () => {
    const conv = sim.engine.conversation(FIRST)!;
    conv.submit("Run pwd");
    await until(() => conv.waitingIndices().length === 1, "the pwd gate in the first conversation", {
      everyMs: 20,
      seen: () => JSON.stringify(conv.waitingIndices()),
    });
    const env = { XDG_STATE_HOME: dir };

    const result = await runMain(["interrupt", "--url", sim.plainUrl, "--conversation", FIRST.slice(0, 8), "--json"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ result: "denied" });
    expect(conv.waitingIndices()).toEqual([]);

    const audit = await runMain(["audit", "--conversation", FIRST.slice(0, 8), "--json"], { env });
    expect(audit.code, audit.stderr).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ conversationId: FIRST, decision: "deny", decidedBy: "cli", request: { commandLine: "pwd" } });
  });

  it("interrupt refuses a prefix two conversations share with exit 2, naming both, and touches neither", async () => {
    const conv = sim.engine.conversation(SECOND)!;
    conv.submit("Run pwd");
    await until(() => conv.waitingIndices().length === 1, "the pwd gate in the second conversation", {
      everyMs: 20,
      seen: () => JSON.stringify(conv.waitingIndices()),
    });

    const result = await runMain(["interrupt", "--url", sim.plainUrl, "--conversation", "abcd000", "--json"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`agy-bridge interrupt: --conversation is the start of 2 conversation ids (${FIRST}, ${SECOND}); give more of the id\n`);
    expect(conv.waitingIndices()).toHaveLength(1);
  });

  it("every live command refuses a prefix two conversations share with exit 2, before it does anything else", async () => {
    const commands: string[][] = [
      ["send", "--pane", "%0", "hello"],
      ["capture", "--out", join(dir, "never")],
      ["doctor", "--report"],
      ["relay", "--redis", "redis://127.0.0.1:9"],
      ["mcp"],
      ["acp"],
    ];
    for (const [name, ...rest] of commands) {
      const result = await runMain([name!, ...rest, "--url", sim.plainUrl, "--conversation", "abcd000"]);
      expect([name, result.code, result.stderr]).toEqual([
        name,
        2,
        `agy-bridge ${name}: --conversation is the start of 2 conversation ids (${FIRST}, ${SECOND}); give more of the id\n`,
      ]);
    }
  });

  it("capture records the conversation the prefix names, under its whole id", async () => {
    const out = join(dir, "capture");
    const result = await runMain(["capture", "--url", sim.plainUrl, "--conversation", SECOND.slice(0, 8), "--out", out, "--duration", "1s", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`recording ${SECOND} at ${sim.plainUrl}`);
    expect(readdirSync(out).length).toBeGreaterThan(0);
  });
});

describe("a live command with --conversation PREFIX and no --url", () => {
  it("interrupt finds the agy discovery sees hosting the one conversation the prefix names", { timeout: 60_000 }, async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const token = "prefix0a1b2c3d4e5f60718293a4b5c6d7";
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/bin.ts", "sim", "--as-agy", "--headless", "--speed", "0.05", "--csrf_token", token], {
      cwd: root,
      env: { ...process.env, AGY_BRIDGE_CACHE_DIR: dir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const gone = new Promise((resolve) => child.once("close", resolve));
    try {
      const agy = JSON.parse(await firstLine(child.stdout!, "the simulated agy", 30_000)) as { conversationId: string; plainUrl: string };
      const client = createAgyRpcClient({ baseUrl: agy.plainUrl, csrfToken: token });
      const waiting = async () => (await client.getAllCascadeTrajectories({})).trajectorySummaries?.[agy.conversationId]?.waitingSteps?.length ?? 0;
      try {
        await client.sendUserCascadeMessage({ conversationId: agy.conversationId, text: "Run pwd", planModel: "MODEL_PLACEHOLDER_M20" });
        await until(async () => (await waiting()) > 0, "the pwd gate", { errors: "throw" });
        const result = await runMain(["interrupt", "--conversation", agy.conversationId.slice(0, 8), "--json"], {
          env: { ...process.env, XDG_STATE_HOME: dir },
        });
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ result: "denied" });
        expect(await waiting()).toBe(0);
      } finally {
        await client.close();
      }
    } finally {
      child.kill("SIGTERM");
      await gone;
    }
  });
});
