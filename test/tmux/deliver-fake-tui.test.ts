/**
 * Turn delivery and prompt actions into the simulator's agy-like TUI in a
 * real tmux pane: the composer, collapsed pastes, a running turn, dialogs
 * and drafts a person typed (spike-notes §5.4, §6.2, §13). The fake port
 * records what the TUI did with the keys it got.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTmuxDriver, parseScreen, spawnTmux, type TmuxDriver } from "../../src/tmux/index.js";
import { createTmuxWorld, type FakeTuiPane, type TmuxWorld } from "./support/tmux-world.js";

let world: TmuxWorld;
let driver: TmuxDriver;
let tui: FakeTuiPane;

beforeEach(async () => {
  world = await createTmuxWorld();
  driver = createTmuxDriver({ socket: { name: world.socketName } });
  tui = await world.startFakeTui("agy");
});

afterEach(async () => {
  await world.dispose();
});

const draft = async (): Promise<string | undefined> => parseScreen(await world.capture(tui.paneId)).draft;

const PERMISSION = { kind: "permission" as const, trajectoryId: "t", stepIndex: 4, target: "rm -rf build", description: "Remove it" };

describe("delivering into the fake TUI", () => {
  it("delivers a turn and confirms it by the draft leaving the composer", async () => {
    const result = await driver.deliverTurn(tui.paneId, "Explain the parser, please.");
    expect(result).toEqual({ result: "delivered", reason: expect.stringContaining("draft left the composer") });
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "Explain the parser, please." }]);
  });

  it("addresses the pane by its exact session name", async () => {
    expect((await driver.deliverTurn("=agy", "by session name")).result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "by session name" }]);
  });

  it("submits multi-line text as one turn, not one turn per line", async () => {
    const text = "first line\nsecond line\n\nlast line";
    expect((await driver.deliverTurn(tui.paneId, text)).result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text }]);
  });

  it("waits for the collapsed [Pasted text #N +K lines] placeholder and submits the full text", async () => {
    const text = Array.from({ length: 20 }, (_, i) => `row ${i + 1} of a long paste`).join("\n");
    expect((await driver.deliverTurn(tui.paneId, text)).result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text }]);
  });

  it("delivers a message too short for a needle by the composer changing", async () => {
    expect((await driver.deliverTurn(tui.paneId, "ok")).result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "ok" }]);
  });

  it("waits while a turn runs and types once agy is ready again", async () => {
    await tui.setView({ running: true, transcript: [{ role: "user", text: "first" }] });
    await world.waitForScreen(tui.paneId, (s) => s.includes("esc to cancel"), "the running footer");
    const commands: string[][] = [];
    const watched = createTmuxDriver({
      socket: { name: world.socketName },
      exec: (file, args, options) => (commands.push([...args]), spawnTmux(file, args, options)),
    });
    const delivery = watched.deliverTurn(tui.paneId, "and then this", { pollMs: 50 });
    // Several reads of the busy screen later, nothing may have been typed.
    await expect.poll(() => commands.filter((c) => c.includes("capture-pane")).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(4);
    expect(commands.some((c) => c.includes("paste-buffer") || c.includes("send-keys"))).toBe(false);
    expect(await tui.calls()).toEqual([]);
    await tui.setView({ running: false });
    expect((await delivery).result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "and then this" }]);
  });

  it("refuses, typing nothing, when agy stays busy past the bound", async () => {
    await tui.setView({ running: true, transcript: [{ role: "user", text: "first" }] });
    await world.waitForScreen(tui.paneId, (s) => s.includes("esc to cancel"), "the running footer");
    const result = await driver.deliverTurn(tui.paneId, "and then this", { readyTimeoutMs: 300 });
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("agy was still working"), screen: { state: "busy" } });
    expect(await tui.calls()).toEqual([]);
  });

  it("confirms with verifyStarted when given, and says the draft alone is not proof when it stays false", async () => {
    const result = await driver.deliverTurn(tui.paneId, "check over RPC", { verifyStarted: async () => false, verifyTimeoutMs: 500 });
    expect(result).toEqual({ result: "unverified", reason: expect.stringContaining("no new USER_INPUT step appeared") });
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "check over RPC" }]);
    await tui.setView({ running: false });
    const confirmed = await driver.deliverTurn(tui.paneId, "second", { verifyStarted: async () => (await tui.calls()).length === 2 });
    expect(confirmed).toEqual({ result: "delivered", reason: expect.stringContaining("USER_INPUT") });
  });
});

describe("guards", () => {
  it("refuses while a step is WAITING, typing nothing", async () => {
    const result = await driver.deliverTurn(tui.paneId, "do not type me", { hasWaitingStep: async () => true });
    expect(result).toEqual({ result: "failed", reason: expect.stringContaining("WAITING") });
    expect(await draft()).toBe("");
    expect(await tui.calls()).toEqual([]);
  });

  it("types despite a WAITING step when forced", async () => {
    const result = await driver.deliverTurn(tui.paneId, "forced turn", { hasWaitingStep: async () => true, force: true });
    expect(result.result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "forced turn" }]);
  });

  it("refuses while a dialog holds the keyboard, so neither the text nor Enter can answer it", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission dialog");
    const result = await driver.deliverTurn(tui.paneId, "hello", { clearDraft: true });
    expect(result).toMatchObject({
      result: "failed",
      reason: expect.stringContaining('command prompt "Do you want to proceed?"'),
      screen: { state: "prompt", composer: "absent" },
    });
    expect(await tui.calls()).toEqual([]);
  });

  it("refuses to append to a draft a person typed, leaving it as it was", async () => {
    await world.tmux(["send-keys", "-t", tui.paneId, "-l", "half typed"]);
    await world.waitForScreen(tui.paneId, (s) => s.includes("> half typed"), "the typed draft");
    const result = await driver.deliverTurn(tui.paneId, "my turn");
    expect(result).toMatchObject({
      result: "failed",
      reason: expect.stringContaining("draft someone typed"),
      screen: { composer: "draft", draft: "half typed" },
    });
    expect(await draft()).toBe("half typed");
    expect(await tui.calls()).toEqual([]);
  });

  it("clears a multi-line draft when told to, then delivers only the new turn", async () => {
    await world.tmux(["load-buffer", "-b", "d", "-"], "someone's\nhalf written\nidea");
    await world.tmux(["paste-buffer", "-p", "-r", "-d", "-b", "d", "-t", tui.paneId]);
    await world.waitForScreen(tui.paneId, (s) => s.includes("  idea"), "the draft");
    // agy 1.1.x's row: C-a C-k BSpace clear a draft (spike-notes §6.2 step 3).
    const result = await driver.deliverTurn(tui.paneId, "my turn", { clearDraft: true, agyVersion: "1.1.27" });
    expect(result.result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "my turn" }]);
  });

  it("refuses when the pane never shows an agy screen it can read", async () => {
    const pane = await world.newSession("silent", ["sleep", "60"]);
    const result = await driver.deliverTurn(pane, "anyone there?", { readyTimeoutMs: 500 });
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("no agy composer could be recognised"), screen: { state: "unknown" } });
  });
});

describe("dialogs in the fake TUI", () => {
  const QUESTION = {
    kind: "question" as const,
    trajectoryId: "t",
    stepIndex: 5,
    questions: [
      {
        question: "Which colour?",
        multiSelect: false,
        options: [
          { id: "1", text: "red" },
          { id: "2", text: "green" },
          { id: "3", text: "blue" },
        ],
      },
    ],
  };

  it("on agy 1.0.x closes a stale dialog after an RPC approval with Escape alone, answering nothing (§5.4)", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission dialog");
    // The step was answered over RPC: the port no longer waits on it, the TUI still shows its dialog.
    await tui.setView({ pending: undefined, running: false });
    const closed = await driver.closePrompt(tui.paneId, { agyVersion: "1.0.10", closeWaitMs: 0 });
    expect(closed).toMatchObject({ result: "closed", keys: ["Escape"] });
    const calls = await tui.calls();
    expect(calls.every((c) => c.call !== "answer" || (c.delivered === false && !(c.answer.kind === "permission" && c.answer.allow)))).toBe(true);
    expect((await driver.deliverTurn(tui.paneId, "next turn")).result).toBe("delivered");
  });

  it("declines in the TUI on its No row, found by label, with the pointer: the port gets a deny", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission dialog");
    expect(await driver.answerPrompt(tui.paneId, { kind: "decline" }, { agyVersion: "1.1.27" })).toMatchObject({
      result: "answered",
      keys: ["Down", "Down", "Down", "Enter"],
    });
    const calls = await tui.calls();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ call: "answer", stepIndex: 4, delivered: true });
    expect(calls[0]).not.toMatchObject({ answer: { allow: true } });
  });

  it("approves in the TUI with Enter on the highlighted 1. Yes", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission dialog");
    expect(await driver.answerPrompt(tui.paneId, { kind: "approve" })).toMatchObject({ result: "answered", keys: ["Enter"] });
    expect(await tui.calls()).toEqual([{ call: "answer", stepIndex: 4, answer: { kind: "permission", allow: true }, delivered: true }]);
  });

  it("answers a question by moving the pointer one Down at a time to the chosen label, then Enter", async () => {
    await tui.setView({ running: true, pending: QUESTION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("3. blue"), "the question dialog");
    expect(await driver.answerPrompt(tui.paneId, { kind: "option", label: "blue" })).toMatchObject({ result: "answered", keys: ["Down", "Down", "Enter"] });
    expect(await tui.calls()).toEqual([{ call: "answer", stepIndex: 5, answer: { kind: "question", selectedOptionIds: ["3"] }, delivered: true }]);
  });

  it("presses nothing for an option the dialog does not offer, or a kind it was not asked to act on", async () => {
    await tui.setView({ running: true, pending: QUESTION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("3. blue"), "the question dialog");
    expect(await driver.answerPrompt(tui.paneId, { kind: "option", label: "purple" })).toMatchObject({
      result: "failed",
      keys: [],
      screen: { prompt: { kind: "question" } },
    });
    expect(await driver.answerPrompt(tui.paneId, { kind: "approve" }, { kinds: ["command"] })).toMatchObject({ result: "failed", keys: [] });
    expect(await tui.calls()).toEqual([]);
  });
});
