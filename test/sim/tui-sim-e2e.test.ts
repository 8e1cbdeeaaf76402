/**
 * `agy-bridge sim` (real engine and language server) with its TUI in a real
 * tmux pane, driven the way a supervisor drives agy: turns typed through
 * bracketed paste, approvals answered over RPC, the stale TUI prompt closed
 * with keys (spike-notes §5.4, §5.6, §6.2).
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const SERVICE = "exa.language_server_pb.LanguageServerService";

interface Step {
  type?: string;
  status?: string;
  userInput?: { userResponse?: string };
}

let tmux: PrivateTmux;
let plainUrl: string;

async function rpc<T>(method: string, body: object): Promise<T> {
  const res = await fetch(`${plainUrl}/${SERVICE}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function activeConversation(): Promise<{ id: string; trajectoryId: string }> {
  const all = await rpc<{ trajectorySummaries?: Record<string, { trajectoryId: string }> }>("GetAllCascadeTrajectories", {});
  const entries = Object.entries(all.trajectorySummaries ?? {});
  expect(entries).toHaveLength(1);
  const [id, summary] = entries[0] as [string, { trajectoryId: string }];
  return { id, trajectoryId: summary.trajectoryId };
}

async function steps(cascadeId: string): Promise<Step[]> {
  return (await rpc<{ steps?: Step[] }>("GetCascadeTrajectorySteps", { cascadeId })).steps ?? [];
}

/** Types a turn like a driver: paste (bracketed), then a separate Enter (spike-notes §6.2 steps 5–7). */
async function typeTurn(text: string): Promise<void> {
  await tmux.paste("sim", `${text}\n`);
  await tmux.waitForScreen("sim", (s) => composer(s).some((line) => line.includes(text)), `the draft "${text}"`);
  await tmux.sendKeys("sim", "Enter");
  await tmux.waitForScreen("sim", (s) => !composer(s).some((line) => line.includes(text)), "the draft leaving the composer");
}

function composer(screen: string): string[] {
  const lines = screen.split("\n");
  const rules = lines.flatMap((line, i) => ((line.match(/─/g)?.length ?? 0) >= 8 && /^[─\s]*$/.test(line) ? [i] : []));
  const [a, b] = rules.slice(-2);
  return a === undefined || b === undefined ? [] : lines.slice(a + 1, b);
}

async function waitingStep(cascadeId: string): Promise<number> {
  let index = -1;
  await expect
    .poll(async () => {
      index = (await steps(cascadeId)).findIndex((s) => s.status === "CORTEX_STEP_STATUS_WAITING");
      return index;
    })
    .toBeGreaterThanOrEqual(0);
  return index;
}

beforeAll(async () => {
  tmux = createPrivateTmux();
  await tmux.newSession("sim", [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0"], { cwd: ROOT, columns: 120, rows: 40 });
  const screen = await tmux.waitForScreen("sim", (s) => s.includes("? for shortcuts") && /http:\/\/127\.0\.0\.1:\d+/.test(s), "the idle TUI");
  plainUrl = (/http:\/\/127\.0\.0\.1:\d+/.exec(screen) as RegExpExecArray)[0];
});

afterAll(async () => {
  await tmux.kill();
});

describe("agy-bridge sim in a tmux pane", () => {
  it("records a pasted turn as a USER_INPUT step over RPC (spike-notes §6.2, §4.3)", async () => {
    const conversation = await activeConversation();
    await typeTurn("Say hello in one short sentence.");
    await expect
      .poll(async () => (await steps(conversation.id)).filter((s) => s.type === "CORTEX_STEP_TYPE_USER_INPUT").map((s) => s.userInput?.userResponse))
      .toEqual(["Say hello in one short sentence."]);
    await tmux.waitForScreen("sim", (s) => s.includes("Hello! I am the simulated agy") && s.includes("? for shortcuts"), "the planner's answer");
  });

  it("keeps its permission prompt open after an RPC approval until 1 Enter closes it (spike-notes §5.4, §5.6)", async () => {
    const conversation = await activeConversation();
    await typeTurn("Run pwd");
    const stepIndex = await waitingStep(conversation.id);
    const prompt = await tmux.waitForScreen("sim", (s) => s.includes("4. No"), "the numbered permission prompt");
    expect(prompt).toContain("1. Yes");
    expect(prompt).toContain("pwd");

    await rpc("HandleCascadeUserInteraction", {
      cascadeId: conversation.id,
      interaction: { trajectoryId: conversation.trajectoryId, stepIndex, permission: { allow: true } },
    });
    const answered = await tmux.waitForScreen("sim", (s) => s.includes("The current directory is"), "the turn finishing after the RPC approval");
    expect(answered).toContain("4. No");

    await tmux.sendKeys("sim", "1", "Enter");
    const closed = await tmux.waitForScreen("sim", (s) => !s.includes("4. No"), "the stale prompt closing");
    expect(closed).toContain("User declined the tool call");
    expect((await steps(conversation.id))[stepIndex]?.status).toBe("CORTEX_STEP_STATUS_DONE");
  });

  it("closes a stale prompt with Escape after an RPC denial (spike-notes §5.4)", async () => {
    const conversation = await activeConversation();
    await typeTurn("Delete the build directory");
    const stepIndex = await waitingStep(conversation.id);
    await tmux.waitForScreen("sim", (s) => s.includes("4. No"), "the permission prompt");
    await rpc("HandleCascadeUserInteraction", {
      cascadeId: conversation.id,
      interaction: { trajectoryId: conversation.trajectoryId, stepIndex, permission: { allow: false } },
    });
    await expect.poll(async () => (await steps(conversation.id))[stepIndex]?.status).not.toBe("CORTEX_STEP_STATUS_WAITING");
    expect(await tmux.capture("sim")).toContain("4. No");
    await tmux.sendKeys("sim", "Escape");
    await tmux.waitForScreen("sim", (s) => !s.includes("4. No"), "the stale prompt closing");
  });

  it("answers a prompt from the TUI keys when no RPC answer came (spike-notes §5.6)", async () => {
    const conversation = await activeConversation();
    await typeTurn("Run pwd");
    const stepIndex = await waitingStep(conversation.id);
    await tmux.waitForScreen("sim", (s) => s.includes("4. No"), "the permission prompt");
    await tmux.sendKeys("sim", "1", "Enter");
    await expect.poll(async () => (await steps(conversation.id))[stepIndex]?.status).toBe("CORTEX_STEP_STATUS_DONE");
    const screen = await tmux.waitForScreen("sim", (s) => !s.includes("4. No") && s.includes("? for shortcuts"), "the turn finishing");
    const thisTurn = screen.slice(screen.lastIndexOf("> Run pwd"));
    expect(thisTurn).toContain("The current directory is");
    expect(thisTurn).not.toContain("User declined the tool call");
  });

  it("sends a multi-select answer typed as digits + Enter to the WAITING question step (spike-notes §5.6)", async () => {
    const conversation = await activeConversation();
    await typeTurn("Which features should I add?");
    const stepIndex = await waitingStep(conversation.id);
    await tmux.waitForScreen("sim", (s) => s.includes("4. [ ]"), "the multi-select prompt");
    await tmux.sendKeys("sim", "2", "3", "Enter");
    await expect.poll(async () => (await steps(conversation.id))[stepIndex]?.status).toBe("CORTEX_STEP_STATUS_DONE");
    const done = (await steps(conversation.id))[stepIndex] as { completedInteractions?: unknown[] };
    expect(JSON.stringify(done.completedInteractions)).toContain('"selectedOptionIds":["2","3"]');
  });

  it("follows a typed /clear to a new root conversation (spike-notes §4.10)", async () => {
    const before = await activeConversation();
    await typeTurn("/clear");
    await expect
      .poll(async () => Object.keys((await rpc<{ trajectorySummaries?: object }>("GetAllCascadeTrajectories", {})).trajectorySummaries ?? {}))
      .toHaveLength(2);
    const screen = await tmux.waitForScreen("sim", (s) => !s.includes("> Run pwd"), "the cleared transcript");
    expect(screen).toContain("? for shortcuts");
    const all = await rpc<{ trajectorySummaries: Record<string, unknown> }>("GetAllCascadeTrajectories", {});
    expect(Object.keys(all.trajectorySummaries)).toContain(before.id);
  });
});
