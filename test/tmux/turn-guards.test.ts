/**
 * Typing a turn on agy's real screen shapes, drawn by the simulator in a
 * real tmux pane: never into a dialog, a picker or the slash popup (text +
 * Enter there confirms whatever is highlighted, spike-notes §13); a leftover
 * dialog of an answered step is closed with Escape and nothing else; agy
 * 1.2.1's status row without `? for shortcuts` and a plan-mode placeholder
 * are ready composers; a slash command goes in only when the popup
 * highlights exactly it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { isGate, ranCommand, startSimPane, type SimPane } from "./support/sim-pane.js";

let sim: SimPane | undefined;
afterEach(async () => {
  await sim?.dispose();
  sim = undefined;
});

const dialogOpen = (s: string): boolean => /^> 1\. Yes/m.test(s) && s.includes("4. No");
const turnEnded = (e: MapperEvent): boolean => e.type === "status" && e.status === "idle";
const enters = (keys: string[][]): number => keys.filter((k) => k.includes("Enter")).length;

async function typeByHand(s: SimPane, text: string, enter = false): Promise<void> {
  await s.world.tmux(["send-keys", "-t", s.paneId, "-l", text]);
  if (enter) await s.world.tmux(["send-keys", "-t", s.paneId, "Enter"]);
}

describe("a turn is never typed into something that holds the keyboard", () => {
  it("refuses a command dialog even when forced past the RPC guard, naming it, with nothing pasted, cleared or pressed", async () => {
    sim = await startSimPane();
    const { session, log, waitFor } = await sim.attach();
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    await waitFor(isGate, "the gate");
    await sim.waitForScreen(dialogOpen, "the command dialog");
    sim.resetRecording();
    const result = await sim.driver.deliverTurn(sim.paneId, "No, do not run it", { force: true, clearDraft: true, readyTimeoutMs: 1_000 });
    expect(result.result).toBe("failed");
    expect(result.reason).toMatch(/command prompt "Do you want to proceed\?"/);
    expect(result.screen?.prompt).toMatchObject({ kind: "command", pointer: 1 });
    expect(sim.pastes()).toBe(0);
    expect(sim.keysSent()).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(log.some(ranCommand)).toBe(false);
    expect(dialogOpen(await sim.screen())).toBe(true);
  }, 60_000);

  it("refuses the /model picker and the slash popup", async () => {
    sim = await startSimPane();
    await typeByHand(sim, "/model", true);
    await sim.waitForScreen((s) => s.includes("Switch Model"), "the model picker");
    const picker = await sim.driver.deliverTurn(sim.paneId, "hello there", { readyTimeoutMs: 1_000 });
    expect(picker).toMatchObject({ result: "failed", screen: { state: "prompt", prompt: { kind: "picker" } } });
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "Escape"]);
    await sim.waitForScreen((s) => !s.includes("Switch Model"), "the picker closed");
    await typeByHand(sim, "/");
    await sim.waitForScreen((s) => s.includes("enter Select · tab Complete"), "the slash popup");
    const popup = await sim.driver.deliverTurn(sim.paneId, "hello there", { clearDraft: true, readyTimeoutMs: 1_000 });
    expect(popup).toMatchObject({ result: "failed", screen: { state: "prompt", prompt: { kind: "slash" } } });
    expect(sim.pastes()).toBe(0);
    expect(sim.keysSent()).toEqual([]);
  }, 60_000);

  it("on agy 1.0.x closes a leftover dialog of an answered step with Escape alone before typing (§5.4)", async () => {
    sim = await startSimPane();
    // A session without the pane answers over RPC and leaves agy's dialog open (spike-notes §5.4).
    const blind = await sim.attach({ pane: false });
    expect(await blind.session.sendTurn("Run pwd").catch((e: Error) => e.message)).toMatch(/no tmux pane/);
    await typeByHand(sim, "Run pwd", true);
    const gate = (await blind.waitFor(isGate, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    expect(await blind.session.approve(gate.interactionId)).toEqual({ result: "delivered", stepIndex: gate.stepIndex });
    await blind.waitFor(turnEnded, "the end of the turn");
    expect(dialogOpen(await sim.screen())).toBe(true);
    const { session, waitFor } = await sim.attach({ agyVersion: "1.0.10", locateVersion: false });
    sim.resetRecording();
    const result = await session.sendTurn("Say hello in one short sentence.");
    expect(result.result).toBe("delivered");
    const keys = sim.keysSent();
    expect(keys[0]).toEqual(["Escape"]);
    expect(keys.slice(1)).toEqual([["Enter"]]);
    expect(sim.pastes()).toBe(1);
    await waitFor((e) => e.type === "user_message" && e.text === "Say hello in one short sentence.", "the new turn");
    expect(blind.log.some(ranCommand)).toBe(true);
  }, 60_000);

  it("without RPC, a dialog on screen is never taken for a leftover: refused, nothing pressed", async () => {
    sim = await startSimPane();
    await typeByHand(sim, "Run pwd", true);
    await sim.waitForScreen(dialogOpen, "the command dialog");
    sim.resetRecording();
    const result = await sim.driver.deliverTurn(sim.paneId, "hello", { readyTimeoutMs: 500 });
    expect(result.result).toBe("failed");
    expect(sim.keysSent()).toEqual([]);
  }, 60_000);
});

describe("ready screens of newer agy builds", () => {
  it("types the next turn on agy 1.2.1 after a tool turn, though `? for shortcuts` is gone", async () => {
    // The dialog closes by itself after the RPC answer: this test is about the ready screen, not the leftover dialog.
    sim = await startSimPane(["--tui-version", "1.2.1", "--tui-stale-dialog", "close"]);
    const { session, waitFor } = await sim.attach();
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    const gate = (await waitFor(isGate, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    expect((await session.approve(gate.interactionId)).result).toBe("delivered");
    await waitFor(turnEnded, "the end of the tool turn");
    const screen = await sim.waitForScreen((s) => !dialogOpen(s) && /^>\s*$/m.test(s), "the composer back");
    expect(screen).not.toContain("? for shortcuts");
    const next = await session.sendTurn("Say hello in one short sentence.", {});
    expect(next.result).toBe("delivered");
    await waitFor((e) => e.type === "user_message" && e.text === "Say hello in one short sentence.", "the next turn");
  }, 60_000);

  it("types into plan mode's empty composer, whose placeholder is not a draft", async () => {
    sim = await startSimPane();
    const { session, waitFor } = await sim.attach();
    for (let i = 0; i < 3 && !(await sim.screen()).includes("Plan mode:"); i++) {
      await sim.world.tmux(["send-keys", "-t", sim.paneId, "BTab"]);
      await new Promise((r) => setTimeout(r, 150));
    }
    await sim.waitForScreen((s) => s.includes("> Plan mode: research & plan only"), "plan mode's placeholder");
    const result = await session.sendTurn("Say hello in one short sentence.");
    expect(result.result).toBe("delivered");
    await waitFor((e) => e.type === "user_message" && e.text === "Say hello in one short sentence.", "the turn");
  }, 60_000);
});

describe("slash commands", () => {
  it("refuses a turn starting with / unless it is sent as a slash command, typing nothing", async () => {
    sim = await startSimPane();
    const result = await sim.driver.deliverTurn(sim.paneId, "/usage");
    expect(result.result).toBe("failed");
    expect(result.reason).toMatch(/slash command/);
    expect(sim.pastes()).toBe(0);
    expect(sim.keysSent()).toEqual([]);
  }, 60_000);

  it("presses Enter only when the popup highlights the typed command, else Escape and failed", async () => {
    sim = await startSimPane();
    const wrong = await sim.driver.deliverTurn(sim.paneId, "/stat", { slash: true, agyVersion: "1.1.27" });
    expect(wrong.result).toBe("failed");
    expect(wrong.reason).toMatch(/highlights \/status, not the typed \/stat/);
    expect(sim.keysSent()).toEqual([["Escape"]]);
    expect(enters(sim.keysSent())).toBe(0);
    // Clear the leftover `/stat` by hand, as the reason tells a person to.
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "C-a", "C-k"]);
    await sim.waitForScreen((s) => !s.includes("/stat"), "the draft cleared");
    sim.resetRecording();
    const right = await sim.driver.deliverTurn(sim.paneId, "/usage", { slash: true, agyVersion: "1.1.27" });
    expect(right.result).toBe("delivered");
    expect(sim.keysSent()).toEqual([["Enter"]]);
  }, 60_000);
});
