/**
 * On a TUI that ignores typed digits (the simulator's default, as agy's
 * arrow menus do, spike-notes §13), no deny path may approve: a deny over
 * RPC closes agy's leftover dialog with Escape (agy 1.0.x, §5.4) and
 * nothing else, a deny in the TUI moves the pointer onto the "No" row found
 * by its label and presses Enter only there, and the command never runs.
 * Real tmux, the real simulator in the pane; the keys are the driver's
 * recorded `send-keys`. The agy 1.2.x paths are in agy12-keys.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { isGate, ranCommand, startSimPane, type SimPane } from "./support/sim-pane.js";

let sim: SimPane | undefined;
afterEach(async () => {
  await sim?.dispose();
  sim = undefined;
});

const resolved = (e: MapperEvent): boolean => e.type === "interaction_resolved";
const turnEnded = (e: MapperEvent): boolean => e.type === "status" && e.status === "idle";
const dialogOpen = (s: string): boolean => /^> 1\. Yes/m.test(s) && s.includes("4. No");

describe("a deny never approves", () => {
  it("the simulator under test ignores digits: `4 Enter` on its command dialog approves (the hazard)", async () => {
    sim = await startSimPane();
    const { waitFor } = await sim.attach();
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "-l", "Run pwd"]);
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "Enter"]);
    await sim.waitForScreen(dialogOpen, "the command dialog");
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "4", "Enter"]);
    await waitFor(ranCommand, "the command's output (the old digit deny approved it)");
  }, 60_000);

  it("deny over RPC with the pane known presses Escape only on agy 1.0.x, and the command does not run", async () => {
    sim = await startSimPane();
    const { session, log, waitFor } = await sim.attach({ agyVersion: "1.0.10", locateVersion: false });
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    const gate = (await waitFor(isGate, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    await sim.waitForScreen(dialogOpen, "the command dialog");
    sim.resetRecording();
    const result = await session.deny(gate.interactionId);
    expect(result).toEqual({ result: "delivered", stepIndex: gate.stepIndex, prompt: { result: "closed", reason: expect.stringContaining("Escape") } });
    expect(sim.keysSent()).toEqual([["Escape"]]);
    expect(await waitFor(resolved, "the gate's resolution")).toMatchObject({ interactionId: gate.interactionId, outcome: "denied" });
    await waitFor(turnEnded, "the end of the turn");
    await sim.waitForScreen((s) => !dialogOpen(s) && /^>\s*$/m.test(s), "the dialog gone and the composer back");
    expect(log.some(ranCommand)).toBe(false);
    expect(sim.pastes()).toBe(0);
  }, 60_000);

  it("deny in the TUI (--via tui) moves onto the No row and confirms only there, never a digit, and the command does not run", async () => {
    sim = await startSimPane();
    const { session, log, waitFor } = await sim.attach({ agyVersion: "1.1.27", locateVersion: false });
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    const gate = (await waitFor(isGate, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    await sim.waitForScreen(dialogOpen, "the command dialog");
    sim.resetRecording();
    expect(await session.deny(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(sim.keysSent()).toEqual([["Down"], ["Down"], ["Down"], ["Enter"]]);
    expect(await waitFor(resolved, "the gate's resolution")).toMatchObject({ interactionId: gate.interactionId, outcome: "denied" });
    await waitFor(turnEnded, "the end of the turn");
    expect(log.some(ranCommand)).toBe(false);
    expect(await sim.screen()).toContain("User declined the tool call");
  }, 60_000);

  it("interrupt while a gate waits denies it and closes the dialog with Escape only on agy 1.0.x", async () => {
    sim = await startSimPane();
    const { session, log, waitFor } = await sim.attach({ agyVersion: "1.0.10", locateVersion: false });
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    const gate = (await waitFor(isGate, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    await sim.waitForScreen(dialogOpen, "the command dialog");
    sim.resetRecording();
    expect(await session.interrupt()).toEqual({ result: "denied", stepIndices: [gate.stepIndex] });
    expect(sim.keysSent()).toEqual([["Escape"]]);
    await waitFor(turnEnded, "the end of the turn");
    expect(log.some(ranCommand)).toBe(false);
  }, 60_000);
});
