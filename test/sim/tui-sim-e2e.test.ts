/**
 * `agy-bridge sim` (real engine and language server) with its TUI in a real
 * tmux pane, driven the way a supervisor drives agy: turns typed through
 * bracketed paste, approvals answered over RPC, the stale TUI dialog closed
 * with Escape, dialogs answered by moving the pointer (spike-notes §5.4, §6.2,
 * §13). Every test starts its own
 * simulator in its own tmux session, so tests never see each other's turns.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const SERVICE = "exa.language_server_pb.LanguageServerService";
const POLL = { timeout: 10_000, interval: 50 };

interface Step {
  type?: string;
  status?: string;
  userInput?: { userResponse?: string };
}

let tmux: PrivateTmux;
let simCount = 0;

beforeAll(() => {
  tmux = createPrivateTmux();
});

afterAll(async () => {
  await tmux.kill();
});

/** One simulator of the test's own, in its own tmux session. */
interface Sim {
  target: string;
  rpc<T>(method: string, body: object): Promise<T>;
  conversationIds(): Promise<string[]>;
  activeConversation(): Promise<{ id: string; trajectoryId: string }>;
  steps(cascadeId: string): Promise<Step[]>;
  typeTurn(text: string): Promise<void>;
  waitingStep(cascadeId: string): Promise<number>;
  waitForScreen(predicate: (screen: string) => boolean, what: string): Promise<string>;
}

async function startSim(flags: string[] = []): Promise<Sim> {
  simCount += 1;
  const target = `sim${simCount}`;
  await tmux.newSession(target, [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0", ...flags], { cwd: ROOT, columns: 120, rows: 60 });
  onTestFinished(() =>
    tmux.run(["kill-session", "-t", target]).then(
      () => undefined,
      () => undefined,
    ),
  );
  if (flags.includes("--trust-prompt")) {
    await tmux.waitForScreen(target, (s) => s.includes("Do you trust the contents of this project?"), "the trust screen", 20_000);
    await tmux.sendKeys(target, "Enter");
  }
  const ready = await tmux.waitForScreen(target, (s) => s.includes("? for shortcuts") && /http:\/\/127\.0\.0\.1:\d+/.test(s), "the idle TUI", 20_000);
  const plainUrl = (/http:\/\/127\.0\.0\.1:\d+/.exec(ready) as RegExpExecArray)[0];

  const rpc = async <T>(method: string, body: object): Promise<T> => {
    const res = await fetch(`${plainUrl}/${SERVICE}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const summaries = async () =>
    (await rpc<{ trajectorySummaries?: Record<string, { trajectoryId: string }> }>("GetAllCascadeTrajectories", {})).trajectorySummaries ?? {};
  const steps = async (cascadeId: string): Promise<Step[]> => (await rpc<{ steps?: Step[] }>("GetCascadeTrajectorySteps", { cascadeId })).steps ?? [];
  const waitForScreen = (predicate: (screen: string) => boolean, what: string) => tmux.waitForScreen(target, predicate, what);
  return {
    target,
    rpc,
    steps,
    waitForScreen,
    conversationIds: async () => Object.keys(await summaries()),
    async activeConversation() {
      const entries = Object.entries(await summaries());
      expect(entries).toHaveLength(1);
      const [id, summary] = entries[0] as [string, { trajectoryId: string }];
      return { id, trajectoryId: summary.trajectoryId };
    },
    /** Types a turn like a driver: paste (bracketed), then a separate Enter (spike-notes §6.2 steps 5–7). */
    async typeTurn(text) {
      await tmux.paste(target, `${text}\n`);
      await waitForScreen((s) => composer(s).some((line) => line.includes(text)), `the draft "${text}"`);
      await tmux.sendKeys(target, "Enter");
      await waitForScreen((s) => !composer(s).some((line) => line.includes(text)), "the draft leaving the composer");
    },
    async waitingStep(cascadeId) {
      let index = -1;
      await expect
        .poll(async () => {
          index = (await steps(cascadeId)).findIndex((s) => s.status === "CORTEX_STEP_STATUS_WAITING");
          return index;
        }, POLL)
        .toBeGreaterThanOrEqual(0);
      return index;
    },
  };
}

/** agy's input box: the lines between the last two full-width (120-column) rules. */
function composer(screen: string): string[] {
  const lines = screen.split("\n");
  const rules = lines.flatMap((line, i) => (line === "─".repeat(120) ? [i] : []));
  const [a, b] = rules.slice(-2);
  return a === undefined || b === undefined ? [] : lines.slice(a + 1, b);
}

describe("agy-bridge sim in a tmux pane", () => {
  it("records a pasted turn as a USER_INPUT step over RPC (spike-notes §6.2, §4.3)", async () => {
    const sim = await startSim();
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Say hello in one short sentence.");
    await expect
      .poll(async () => (await sim.steps(conversation.id)).filter((s) => s.type === "CORTEX_STEP_TYPE_USER_INPUT").map((s) => s.userInput?.userResponse), POLL)
      .toEqual(["Say hello in one short sentence."]);
    await sim.waitForScreen((s) => s.includes("Hello! I am the simulated agy") && s.includes("? for shortcuts"), "the planner's answer");
  });

  it("keeps its dialog open after an RPC approval until Escape closes it (spike-notes §5.4)", async () => {
    const sim = await startSim();
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Run pwd");
    const stepIndex = await sim.waitingStep(conversation.id);
    const dialog = await sim.waitForScreen((s) => s.includes("  4. No"), "the command dialog");
    expect(dialog).toContain("> 1. Yes");
    expect(dialog).toContain("Requesting permission for:\n   pwd\n");
    expect(composer(dialog)).toEqual([]);

    await sim.rpc("HandleCascadeUserInteraction", {
      cascadeId: conversation.id,
      interaction: { trajectoryId: conversation.trajectoryId, stepIndex, permission: { allow: true } },
    });
    const answered = await sim.waitForScreen((s) => s.includes("The current directory is"), "the turn finishing after the RPC approval");
    expect(answered).toContain("  4. No");

    await tmux.sendKeys(sim.target, "Escape");
    const closed = await sim.waitForScreen((s) => !s.includes("  4. No") && s.includes("? for shortcuts"), "the stale dialog closing");
    expect(closed).toContain("User declined the tool call");
    expect((await sim.steps(conversation.id))[stepIndex]?.status).toBe("CORTEX_STEP_STATUS_DONE");
  });

  it("closes a stale dialog with Escape after an RPC denial (spike-notes §5.4)", async () => {
    const sim = await startSim();
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Delete the build directory");
    const stepIndex = await sim.waitingStep(conversation.id);
    await sim.waitForScreen((s) => s.includes("  4. No"), "the command dialog");
    await sim.rpc("HandleCascadeUserInteraction", {
      cascadeId: conversation.id,
      interaction: { trajectoryId: conversation.trajectoryId, stepIndex, permission: { allow: false } },
    });
    await expect.poll(async () => (await sim.steps(conversation.id))[stepIndex]?.status, POLL).not.toBe("CORTEX_STEP_STATUS_WAITING");
    expect(await tmux.capture(sim.target)).toContain("  4. No");
    await tmux.sendKeys(sim.target, "Escape");
    await sim.waitForScreen((s) => !s.includes("  4. No"), "the stale dialog closing");
  });

  it("runs the command when Enter confirms the highlighted `1. Yes` in the TUI (fact 14)", async () => {
    const sim = await startSim();
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Run pwd");
    const stepIndex = await sim.waitingStep(conversation.id);
    await sim.waitForScreen((s) => s.includes("  4. No"), "the command dialog");
    await tmux.sendKeys(sim.target, "Enter");
    await expect.poll(async () => (await sim.steps(conversation.id))[stepIndex]?.status, POLL).toBe("CORTEX_STEP_STATUS_DONE");
    const screen = await sim.waitForScreen((s) => !s.includes("  4. No") && s.includes("? for shortcuts"), "the turn finishing");
    const thisTurn = screen.slice(screen.lastIndexOf("> Run pwd"));
    expect(thisTurn).toContain("● Bash(pwd) (ctrl+o to expand)\n  ⎿  /home/sim/project");
    expect(thisTurn).toContain("The current directory is");
    expect(thisTurn).not.toContain("User declined the tool call");
  });

  it("denies on `4 Enter` only with --tui-digits accept; by default the same keys approve (fact 14)", async () => {
    for (const [flags, expected] of [
      [["--tui-digits", "accept"], false],
      [[], true],
    ] as const) {
      const sim = await startSim([...flags]);
      const conversation = await sim.activeConversation();
      await sim.typeTurn("Delete the build directory");
      const stepIndex = await sim.waitingStep(conversation.id);
      await sim.waitForScreen((s) => s.includes("  4. No"), "the command dialog");
      await tmux.sendKeys(sim.target, "4", "Enter");
      await expect.poll(async () => (await sim.steps(conversation.id))[stepIndex]?.status, POLL).toBe("CORTEX_STEP_STATUS_DONE");
      const step = (await sim.steps(conversation.id))[stepIndex] as { runCommand?: { exitCode?: number } };
      expect(step.runCommand?.exitCode !== undefined).toBe(expected);
    }
  });

  it("declines on Escape, then asks the same command again with six options (facts 10, 22)", async () => {
    const sim = await startSim();
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Delete the build directory");
    await sim.waitingStep(conversation.id);
    await sim.waitForScreen((s) => s.includes("  4. No"), "the command dialog");
    await tmux.sendKeys(sim.target, "Escape");
    const declined = await sim.waitForScreen((s) => s.includes("? for shortcuts"), "the turn ending");
    expect(declined).toContain("Command\n  ⎿  User declined the tool call");
    await sim.typeTurn("Delete the build directory");
    const again = await sim.waitForScreen((s) => s.includes("  6. No, and always deny"), "the six-option dialog");
    expect(again).toContain("  5. No, and always deny for commands that start with");
  });

  it("sends a multi-select answer chosen with arrows and space to the WAITING question step", async () => {
    const sim = await startSim();
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Which features should I add?");
    const stepIndex = await sim.waitingStep(conversation.id);
    await sim.waitForScreen((s) => s.includes("  4. [ ]"), "the multi-select dialog");
    await tmux.sendKeys(sim.target, "Down", "Space", "Down", "Space");
    await sim.waitForScreen((s) => s.includes("  2. [x]") && s.includes("> 3. [x]"), "the ticked options");
    await tmux.sendKeys(sim.target, "Enter");
    await expect.poll(async () => (await sim.steps(conversation.id))[stepIndex]?.status, POLL).toBe("CORTEX_STEP_STATUS_DONE");
    const done = (await sim.steps(conversation.id))[stepIndex] as { completedInteractions?: unknown[] };
    expect(JSON.stringify(done.completedInteractions)).toContain('"selectedOptionIds":["2","3"]');
  });

  it("with --tui-version 1.2.1 stops drawing `? for shortcuts` after a tool turn (fact 6)", async () => {
    const sim = await startSim(["--tui-version", "1.2.1"]);
    const conversation = await sim.activeConversation();
    await sim.typeTurn("Run pwd");
    await sim.waitingStep(conversation.id);
    await sim.waitForScreen((s) => s.includes("  4. No"), "the command dialog");
    await tmux.sendKeys(sim.target, "Enter");
    const idle = await sim.waitForScreen((s) => s.includes("The current directory is") && !s.includes("esc to cancel"), "the turn finishing");
    expect(idle).not.toContain("? for shortcuts");
    expect(composer(idle)).toEqual([">", "", ""]);
  });

  it("starts on the trust screen with --trust-prompt and switches the model of later turns with /model (facts 16–17)", async () => {
    const sim = await startSim(["--trust-prompt"]);
    const conversation = await sim.activeConversation();
    await tmux.sendKeys(sim.target, "-l", "/model");
    await tmux.sendKeys(sim.target, "Enter");
    await sim.waitForScreen((s) => s.includes("Switch Model"), "the model picker");
    await tmux.sendKeys(sim.target, "Right", "Enter");
    await sim.waitForScreen((s) => s.includes("Set model to Gemini · high") && /Gemini · hig\n/.test(s), "the new model label");
    await sim.typeTurn("Say hello in one short sentence.");
    await expect.poll(async () => JSON.stringify(await sim.steps(conversation.id)), POLL).toContain("MODEL_PLACEHOLDER_M71");
  });

  it("follows a typed /clear to a new root conversation (spike-notes §4.10)", async () => {
    const sim = await startSim();
    const before = await sim.activeConversation();
    await sim.typeTurn("Say hello in one short sentence.");
    await sim.waitForScreen((s) => s.includes("Hello! I am the simulated agy") && s.includes("? for shortcuts"), "the first turn's answer");
    await sim.typeTurn("/clear");
    await expect.poll(() => sim.conversationIds(), POLL).toHaveLength(2);
    const screen = await sim.waitForScreen((s) => !s.includes("Hello! I am the simulated agy"), "the cleared transcript");
    expect(screen).toContain("? for shortcuts");
    const ids = await sim.conversationIds();
    expect(ids).toContain(before.id);
    const [fresh] = ids.filter((id) => id !== before.id);
    expect(await sim.steps(fresh as string)).toEqual([]);
  });
});
