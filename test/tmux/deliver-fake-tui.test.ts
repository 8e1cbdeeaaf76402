/**
 * Turn delivery into the simulator's fake TUI in a real tmux pane: the
 * composer, collapsed pastes, footers, prompts and drafts a person typed
 * (spike-notes §5.4, §5.6, §6.2). The fake port records what the TUI did.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTmuxDriver, parseScreen, type TmuxDriver } from "../../src/tmux/index.js";
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

  it("types into a running turn with one Enter (agy queues it as the next turn)", async () => {
    await tui.setView({ running: true, transcript: [{ role: "user", text: "first" }] });
    await world.waitForScreen(tui.paneId, (s) => s.includes("esc to cancel"), "the running footer");
    expect((await driver.deliverTurn(tui.paneId, "and then this")).result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "and then this" }]);
  });

  it("confirms with verifyStarted when given, and says the draft alone is not proof when it stays false", async () => {
    const result = await driver.deliverTurn(tui.paneId, "check over RPC", { verifyStarted: async () => false, verifyTimeoutMs: 500 });
    expect(result).toEqual({ result: "unverified", reason: expect.stringContaining("no new USER_INPUT step appeared") });
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "check over RPC" }]);
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

  it("refuses while a numbered prompt is open, so Enter cannot answer it", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission prompt");
    const result = await driver.deliverTurn(tui.paneId, "hello");
    expect(result).toEqual({ result: "failed", reason: expect.stringContaining('"Allow this command? rm -rf build"') });
    expect(await tui.calls()).toEqual([]);
    expect(await draft()).toBe("");
  });

  it("refuses to append to a draft a person typed, leaving it as it was", async () => {
    await world.tmux(["send-keys", "-t", tui.paneId, "-l", "half typed"]);
    await world.waitForScreen(tui.paneId, (s) => s.includes("> half typed"), "the typed draft");
    const result = await driver.deliverTurn(tui.paneId, "my turn");
    expect(result).toEqual({ result: "failed", reason: expect.stringContaining("draft someone typed") });
    expect(await draft()).toBe("half typed");
    expect(await tui.calls()).toEqual([]);
  });

  it("clears a multi-line draft when told to, then delivers only the new turn", async () => {
    await world.tmux(["load-buffer", "-b", "d", "-"], "someone's\nhalf written\nidea");
    await world.tmux(["paste-buffer", "-p", "-r", "-d", "-b", "d", "-t", tui.paneId]);
    await world.waitForScreen(tui.paneId, (s) => s.includes("  idea"), "the draft");
    const result = await driver.deliverTurn(tui.paneId, "my turn", { clearDraft: true });
    expect(result.result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "my turn" }]);
  });

  it("refuses when the pane never shows agy's footer", async () => {
    const pane = await world.newSession("silent", ["sleep", "60"]);
    const result = await driver.deliverTurn(pane, "anyone there?", { readyTimeoutMs: 500 });
    expect(result).toEqual({ result: "failed", reason: expect.stringContaining("never showed agy's idle or running footer") });
  });
});

describe("prompt keys into the fake TUI", () => {
  it("closes a stale prompt after an RPC approval with 1 Enter (spike-notes §5.4)", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission prompt");
    await tui.setView({ pending: undefined });
    await driver.pressPromptKeys(tui.paneId, { kind: "permission", allow: true });
    await world.waitForScreen(tui.paneId, (s) => !s.includes("4. No"), "the prompt closing");
    expect(await tui.calls()).toEqual([{ call: "answer", stepIndex: 4, answer: { kind: "permission", allow: true }, delivered: false }]);
    expect((await driver.deliverTurn(tui.paneId, "next turn")).result).toBe("delivered");
  });

  it("denies with 4 Enter", async () => {
    await tui.setView({ running: true, pending: PERMISSION });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the permission prompt");
    await driver.pressPromptKeys(tui.paneId, { kind: "permission", allow: false });
    await expect.poll(() => tui.calls()).toEqual([{ call: "answer", stepIndex: 4, answer: { kind: "permission", allow: false }, delivered: true }]);
  });
});
