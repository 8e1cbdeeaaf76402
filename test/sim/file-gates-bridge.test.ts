/**
 * The bridge's key paths (src/tmux key table, key plans, prompt actions)
 * against the simulator's agy 1.2.x `Pending edit` and `Create file`
 * dialogs, drawn from the engine's own CODE_ACTION / WRITE_TO_FILE steps
 * (fixtures/scenarios/file-edit-gate.json, file-create-outside-gate.json).
 * Escape is disabled in `Pending edit` and interrupts the turn at `Create
 * file` (spike-notes K5, K6), so no path may press it here: a decline is the
 * "No" row found by its label, and a leftover dialog after an RPC answer is
 * closed with the answer's own digit (K7). Real tmux on a private socket;
 * the keys are the driver's recorded `send-keys`.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { isGate, startSimPane, type SimPane } from "../tmux/support/sim-pane.js";

let sim: SimPane | undefined;
afterEach(async () => {
  await sim?.dispose();
  sim = undefined;
});

type Gate = Extract<MapperEvent, { type: "interaction_requested" }>;
const resolved = (e: MapperEvent): boolean => e.type === "interaction_resolved";
const turnEnded = (e: MapperEvent): boolean => e.type === "status" && e.status === "idle";
const saying =
  (text: string) =>
  (e: MapperEvent): boolean =>
    (e.type === "message" || e.type === "message_delta") && "text" in e && typeof e.text === "string" && e.text.includes(text);
const pendingEdit = (s: string): boolean => s.includes("Accept this file edit?") && s.includes("2. No, reject this change");
const interrupted = (s: string): boolean => s.includes("Interrupted");

async function editGate(pane: SimPane, agyVersion = "1.2.10"): Promise<{ followed: Awaited<ReturnType<SimPane["attach"]>>; gate: Gate }> {
  const followed = await pane.attach({ agyVersion, locateVersion: false });
  expect((await followed.session.sendTurn("Fix the greeting in hello.ts")).result).toBe("delivered");
  const gate = (await followed.waitFor(isGate, "the edit's file gate")) as Gate;
  await pane.waitForScreen(pendingEdit, "the Pending edit dialog");
  pane.resetRecording();
  return { followed, gate };
}

describe("Pending edit on agy 1.2.x: no path presses Escape", () => {
  it("a decline in the TUI presses 2, the row labelled No, reject this change — never Escape; the edit is rejected", async () => {
    sim = await startSimPane(["--tui-version", "1.2"]);
    const { followed, gate } = await editGate(sim);
    expect(gate.request).toMatchObject({ kind: "permission", variant: "filePermission", target: "file:///home/sim/project/src/hello.ts" });
    expect(await followed.session.deny(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(sim.keysSent().flat()).toEqual(["2"]);
    expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ interactionId: gate.interactionId, outcome: "denied" });
    await followed.waitFor(saying("You rejected the edit"), "the rejection reply");
    await followed.waitFor(turnEnded, "the end of the turn");
    expect(followed.log.some(saying("I fixed the typo"))).toBe(false);
  }, 60_000);

  it("an RPC approval on a stale Pending edit is closed with 1 alone, never Escape: the edit runs and the turn is not interrupted", async () => {
    sim = await startSimPane(["--tui-version", "1.2", "--tui-stale-dialog", "stay"]);
    const { followed, gate } = await editGate(sim);
    const result = await followed.session.approve(gate.interactionId);
    expect(result).toMatchObject({ result: "delivered", stepIndex: gate.stepIndex, prompt: { result: "closed" } });
    expect(sim.keysSent().flat()).toEqual(["1"]);
    expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ outcome: "approved" });
    await followed.waitFor(saying("I fixed the typo"), "the reply after the edit");
    await followed.waitFor(turnEnded, "the end of the turn");
    expect(interrupted(await sim.screen())).toBe(false);
  }, 60_000);

  it("an RPC deny on a stale Pending edit is closed with 2 alone, never Escape", async () => {
    sim = await startSimPane(["--tui-version", "1.2", "--tui-stale-dialog", "stay"]);
    const { followed, gate } = await editGate(sim);
    expect(await followed.session.deny(gate.interactionId)).toMatchObject({ result: "delivered", prompt: { result: "closed" } });
    expect(sim.keysSent().flat()).toEqual(["2"]);
    expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ outcome: "denied" });
    await followed.waitFor(saying("You rejected the edit"), "the rejection reply");
    expect(interrupted(await sim.screen())).toBe(false);
  }, 60_000);
});

describe("Create file outside the workspace on agy 1.2.x", () => {
  it("a decline in the TUI presses 3, its No row, never the always-allow row 2 and never Escape", async () => {
    sim = await startSimPane(["--tui-version", "1.2"]);
    const followed = await sim.attach({ agyVersion: "1.2.10", locateVersion: false });
    expect((await followed.session.sendTurn("Save a reminder in my home folder")).result).toBe("delivered");
    const gate = (await followed.waitFor(isGate, "the creation's file gate")) as Gate;
    await sim.waitForScreen((s) => s.includes("3. No, deny creation"), "the three-row Create file dialog");
    sim.resetRecording();
    expect(await followed.session.deny(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(sim.keysSent().flat()).toEqual(["3"]);
    expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ outcome: "denied" });
    await followed.waitFor(saying("You denied creating ~/reminder.txt"), "the denial reply");
  }, 60_000);
});
