/**
 * `agy-bridge doctor --report` against the simulator's personas: the 1.0.10
 * persona (TLS URL, no token) confirms the 1.0.10 facts; the 1.2 persona
 * (found by discovery, both listeners, a token) contradicts exactly the
 * facts that changed and says what it saw. The JSON shape is the contract.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { runMain } from "../support/cli-io.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { startSimPane, type SimPane } from "./support/sim-world.js";
import { until } from "../support/until.js";
import { startSimServer } from "../../src/sim/index.js";

interface Report {
  agyVersion: string | null;
  agyVersionSource: string | null;
  newerThanProbed: boolean;
  simulator: boolean;
  generatedAt: string;
  facts: Array<{ id: string; statement: string; status: "confirmed" | "contradicted" | "not_checked"; seen: string | null }>;
}

/** The 1.0.10 facts a live agy can show (provenance live 1.0.10, and the shapes every persona shares). */
const FACTS_1_0_10 = ["1.1", "10.3#2", "3.1", "3.2", "3.3#1", "1.6#5", "1.5", "3.4#2", "3.4#3", "3.4#5", "3.11#1", "3.11#3", "3.10", "13#2"];

let tmux: PrivateTmux;
let sessions = 0;

beforeAll(() => {
  tmux = createPrivateTmux();
});

afterAll(async () => {
  await tmux.kill();
});

function session(prefix: string): string {
  sessions += 1;
  const name = `${prefix}${sessions}`;
  onTestFinished(() =>
    tmux.run(["kill-session", "-t", name]).then(
      () => undefined,
      () => undefined,
    ),
  );
  return name;
}

/** A finished turn, so the conversation has steps for the stream and snapshot facts. */
async function finishedTurn(sim: SimPane, id: string): Promise<void> {
  await sim.typeTurn("Say hello in one short sentence.");
  await until(
    async () => {
      const all = await sim.rpc<{ trajectorySummaries?: Record<string, { status?: string; stepCount?: number }> }>("GetAllCascadeTrajectories", {});
      const mine = all.trajectorySummaries?.[id];
      return mine?.status === "CASCADE_RUN_STATUS_IDLE" && (mine.stepCount ?? 0) >= 3 ? true : undefined;
    },
    "the turn to finish",
    { ms: 20_000, everyMs: 50 },
  );
}

function status_(report: Report, id: string): Report["facts"][number] | undefined {
  return report.facts.find((f) => f.id === id);
}

function statuses(report: Report): Record<string, string> {
  return Object.fromEntries(report.facts.map((f) => [f.id, f.status]));
}

describe("agy-bridge doctor --report", () => {
  it("prints exactly {agyVersion, agyVersionSource, newerThanProbed, simulator, generatedAt, facts} and confirms every 1.0.10 fact on the 1.0.10 persona over TLS without a token", async () => {
    const sim = await startSimPane(tmux, session("a"), ["--speed", "0", "--agy-version", "1.0.10"]);
    const id = await sim.conversationId();
    await finishedTurn(sim, id);
    const result = await runMain([
      "doctor",
      "--report",
      "--json",
      "--url",
      sim.tlsUrl,
      "--conversation",
      id,
      "--pane",
      `=${sim.target}`,
      "-L",
      tmux.socketName,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(Object.keys(report)).toEqual(["agyVersion", "agyVersionSource", "newerThanProbed", "simulator", "generatedAt", "facts"]);
    // --url skips discovery, and the simulator's TUI draws no agy banner: the version is unknown.
    expect(report).toMatchObject({ agyVersion: null, agyVersionSource: null, newerThanProbed: false, simulator: false });
    expect(new Date(report.generatedAt).toISOString()).toBe(report.generatedAt);
    for (const fact of report.facts) {
      expect(Object.keys(fact)).toEqual(["id", "statement", "status", "seen"]);
      expect(["confirmed", "contradicted", "not_checked"]).toContain(fact.status);
    }
    const status = statuses(report);
    for (const id of FACTS_1_0_10) expect(status[id], `${id}: ${JSON.stringify(report.facts.find((f) => f.id === id))}`).toBe("confirmed");
    expect(report.facts.filter((f) => f.status === "contradicted")).toEqual([]);
    // Facts recorded only for newer builds, absent here, are not held against an agy of unknown version.
    expect(status["10.4#4"]).toBe("not_checked");
    expect(report.facts.find((f) => f.id === "10.4#4")?.seen).toContain("404");
    expect(result.stdout).not.toContain(id);
  }, 90_000);

  it("contradicts, on the 1.2 persona found by discovery with a token, exactly the facts that changed, saying what it saw", async () => {
    const token = `tok-${randomUUID()}`;
    const cache = mkdtempSync(join(tmpdir(), "agyb-report-"));
    onTestFinished(() => rmSync(cache, { recursive: true, force: true }));
    const sim = await startSimPane(tmux, session("b"), ["--as-agy", "--agy-version", "1.2", "--speed", "0", "--csrf_token", token], {
      token,
      env: { AGY_BRIDGE_CACHE_DIR: cache },
    });
    const id = await sim.conversationId();
    await finishedTurn(sim, id);
    const result = await runMain(["doctor", "--report", "--json", "--conversation", id, "--pane", `=${sim.target}`, "-L", tmux.socketName]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).toMatchObject({ agyVersion: "1.2", agyVersionSource: "process", newerThanProbed: false, simulator: true });
    // tmux names the simulator's pane command as the launcher runs it: `agy` once the simulator runs under that name, else what it is.
    const paneCommand = report.facts.find((f) => f.id === "14#10");
    if (paneCommand?.status === "contradicted") expect(paneCommand.seen).toContain("agy-bridge's simulator");
    else expect(paneCommand).toMatchObject({ status: "confirmed", seen: "agy" });
    const contradicted = report.facts.filter((f) => f.status === "contradicted" && f.id !== "14#10");
    expect(contradicted.map((f) => f.id).sort()).toEqual(["10.3#2", "3.2", "3.4#2"]);
    expect(status_(report, "14#2")).toMatchObject({ status: "confirmed", seen: "agy 1.2, from its process; this is agy-bridge's simulator, not a real agy" });
    // What only a key press could show is left unchecked, with the one thing to do, naming the pane.
    for (const keyFact of ["14#6", "14#7", "14#9"]) {
      expect(status_(report, keyFact)?.status, keyFact).toBe("not_checked");
      expect(status_(report, keyFact)?.seen, keyFact).toContain(`agy-bridge screen --pane =${sim.target} -L ${tmux.socketName}`);
    }
    const seen = Object.fromEntries(contradicted.map((f) => [f.id, f.seen ?? ""]));
    expect(seen["10.3#2"]).toContain("401");
    expect(seen["3.2"]).toContain("metadata.workspaces");
    expect(seen["3.4#2"]).toContain("update.fullyIdle");
    expect(seen["3.4#2"]).toContain("update.mainTrajectoryUpdate.status");
    const status = statuses(report);
    for (const newer of ["10.2", "10.4#3", "10.4#4", "10.5#3"]) expect(status[newer], newer).toBe("confirmed");
    expect(result.stdout + result.stderr).not.toContain(token);
  }, 120_000);

  it("presses no key and answers no prompt: a command approval open before the report is still open, and its step still waits, after it", async () => {
    const sim = await startSimPane(tmux, session("c"), ["--speed", "0", "--agy-version", "1.2"]);
    const id = await sim.conversationId();
    await sim.typeTurn("Run pwd");
    const waitingSteps = async () => {
      const all = await sim.rpc<{ trajectorySummaries?: Record<string, { waitingSteps?: unknown[] }> }>("GetAllCascadeTrajectories", {});
      return all.trajectorySummaries?.[id]?.waitingSteps?.length ?? 0;
    };
    await until(async () => ((await waitingSteps()) === 1 ? true : undefined), "the command approval", { ms: 20_000, everyMs: 50 });
    const before = await tmux.waitForScreen(sim.target, (s) => s.includes("pwd") && /1\. Yes/.test(s), "agy's dialog");
    const result = await runMain([
      "doctor",
      "--report",
      "--json",
      "--url",
      sim.plainUrl,
      "--conversation",
      id,
      "--pane",
      `=${sim.target}`,
      "-L",
      tmux.socketName,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    // The dialog's step still waits, so the report cannot tell a stale dialog from a live one, and says what to do.
    expect(status_(report, "14#8")).toMatchObject({ status: "not_checked" });
    expect(status_(report, "14#8")?.seen).toContain("still waits");
    expect(await waitingSteps()).toBe(1);
    expect(await tmux.capture(sim.target)).toBe(before);
  }, 90_000);

  it("prints Markdown that says nothing secret is in it and how to attach it, and exits 0 with contradictions", async () => {
    const sim = await startSimServer({ agyVersion: "1.2", csrfToken: "tok-markdown-0123456789" });
    onTestFinished(() => sim.close());
    const result = await runMain([
      "doctor",
      "--report",
      "--url",
      sim.plainUrl,
      "--csrf-token",
      "tok-markdown-0123456789",
      "--conversation",
      sim.engine.activeConversationId,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^# agy-bridge compatibility report\n/);
    expect(result.stdout).toContain("| 10.3#2 | **contradicted** |");
    expect(result.stdout).toContain("Nothing secret is in this report");
    expect(result.stdout).toContain("agy-bridge doctor --report > agy-report.md");
    expect(result.stdout + result.stderr).not.toContain("tok-markdown-0123456789");
    expect(result.stderr).toContain("contradicted: 10.3#2");
  }, 60_000);

  it("exits 1 with a sentence when no agy answers", async () => {
    const result = await runMain(["doctor", "--report", "--url", "http://127.0.0.1:9", "--conversation", "c"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^agy-bridge doctor: no agy answers at http:\/\/127\.0\.0\.1:9/);
  });
});
