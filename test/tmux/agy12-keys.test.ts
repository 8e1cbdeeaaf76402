/**
 * The key table against the simulator's agy 1.2.x TUI (`sim --tui-version
 * 1.2`): digits answer a dialog at once (spike-notes K1), Escape at an
 * approval cancels the tool call and ends the turn (K5), LF inserts a
 * newline and CR submits (K15) — and whether an RPC answer closes the TUI's
 * dialog is played both ways (`--tui-stale-dialog close|stay`, K7). Real
 * tmux on a private socket, the real simulator in the pane; the keys are
 * the driver's recorded `send-keys`. Each session is told its agy version
 * (`agyVersion`, version lookups off), so the row of the table is the one
 * under test.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { until } from "../support/until.js";
import { isGate, ranCommand, startSimPane, type SimPane } from "./support/sim-pane.js";

let sim: SimPane | undefined;
afterEach(async () => {
  await sim?.dispose();
  sim = undefined;
});

type Gate = Extract<MapperEvent, { type: "interaction_requested" }>;
const resolved = (e: MapperEvent): boolean => e.type === "interaction_resolved";
const turnEnded = (e: MapperEvent): boolean => e.type === "status" && e.status === "idle";
const dialog12 = (s: string): boolean => /^> 1\. Yes, run command/m.test(s) && /No, cancel/.test(s);
const interrupted = (s: string): boolean => s.includes("Interrupted");
const flat = (keys: string[][]): string[] => keys.flat();

async function sim12(extra: readonly string[] = []): Promise<SimPane> {
  return startSimPane(["--tui-version", "1.2", ...extra]);
}

/** A session told its agy version; no version lookup can change it mid-test. */
async function attach(pane: SimPane, agyVersion: string | null) {
  return pane.attach({ agyVersion, locateVersion: false });
}

async function gateUp(pane: SimPane, followed: Awaited<ReturnType<typeof attach>>, text = "Run pwd"): Promise<Gate> {
  expect((await followed.session.sendTurn(text)).result).toBe("delivered");
  const gate = (await followed.waitFor(isGate, "the gate")) as Gate;
  await pane.waitForScreen(dialog12, "the 1.2 command dialog");
  pane.resetRecording();
  return gate;
}

describe("an RPC approval on agy 1.2.x is never followed by a key that cancels the approved command", () => {
  it("stale dialog stays: closes it with the Yes digit alone, never Escape; the command runs, the turn is not interrupted", async () => {
    sim = await sim12(["--tui-stale-dialog", "stay"]);
    const followed = await attach(sim, "1.2.10");
    const gate = await gateUp(sim, followed);
    const result = await followed.session.approve(gate.interactionId);
    expect(result).toMatchObject({ result: "delivered", stepIndex: gate.stepIndex, prompt: { result: "closed" } });
    expect(flat(sim.keysSent())).toEqual(["1"]);
    await followed.waitFor(ranCommand, "the approved command's output");
    await followed.waitFor(turnEnded, "the end of the turn");
    expect(interrupted(await sim.screen())).toBe(false);
    expect(followed.log.some((e) => e.type === "diagnostic" && e.code === "stale_dialog")).toBe(false);
  }, 60_000);

  it("stale dialog closes by itself: presses no key at all", async () => {
    sim = await sim12(["--tui-stale-dialog", "close"]);
    const followed = await attach(sim, "1.2.10");
    const gate = await gateUp(sim, followed);
    const result = await followed.session.approve(gate.interactionId);
    // Gone by the first read ("none") or within the wait ("closed", by itself): either way no key.
    expect(result).toMatchObject({ result: "delivered", prompt: { result: expect.stringMatching(/^(none|closed)$/) } });
    expect(sim.keysSent()).toEqual([]);
    await followed.waitFor(ranCommand, "the approved command's output");
    expect(interrupted(await sim.screen())).toBe(false);
  }, 60_000);
});

describe("no deny path approves on agy 1.2.x", () => {
  it("deny over RPC closes the leftover dialog with the No row's digit; the command never runs", async () => {
    sim = await sim12(["--tui-stale-dialog", "stay"]);
    const followed = await attach(sim, "1.2.10");
    const gate = await gateUp(sim, followed);
    expect(await followed.session.deny(gate.interactionId)).toMatchObject({ result: "delivered", prompt: { result: "closed" } });
    expect(flat(sim.keysSent())).toEqual(["4"]);
    expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ interactionId: gate.interactionId, outcome: "denied" });
    await followed.waitFor(turnEnded, "the end of the turn");
    expect(followed.log.some(ranCommand)).toBe(false);
  }, 60_000);

  it("deny in the TUI presses the No row's own digit alone — 4 of 4, 2 of 2 — never Escape or Enter", async () => {
    for (const options of ["4", "2"]) {
      sim = await sim12(["--tui-command-options", options]);
      const followed = await attach(sim, "1.2.10");
      const gate = await gateUp(sim, followed);
      expect(await followed.session.deny(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
      expect(flat(sim.keysSent())).toEqual([options]);
      expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ outcome: "denied" });
      await followed.waitFor(turnEnded, "the end of the turn");
      expect(followed.log.some(ranCommand)).toBe(false);
      await sim.dispose();
      sim = undefined;
    }
  }, 120_000);

  it("deny in the TUI of a three-row File access dialog presses 3, its No row, never the always-allow row 2", async () => {
    sim = await sim12();
    const followed = await attach(sim, "1.2.10");
    expect((await followed.session.sendTurn("Read my shell profile")).result).toBe("delivered");
    const gate = (await followed.waitFor(isGate, "the file gate")) as Gate;
    await sim.waitForScreen((s) => s.includes("3. No, deny access"), "the File access dialog");
    sim.resetRecording();
    expect(await followed.session.deny(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(flat(sim.keysSent())).toEqual(["3"]);
    expect(await followed.waitFor(resolved, "the gate's resolution")).toMatchObject({ interactionId: gate.interactionId, outcome: "denied" });
  }, 60_000);

  it("approve in the TUI is the digit 1 alone: no Enter follows it to the next screen", async () => {
    sim = await sim12();
    const followed = await attach(sim, "1.2.10");
    const gate = await gateUp(sim, followed);
    expect(await followed.session.approve(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(flat(sim.keysSent())).toEqual(["1"]);
    await followed.waitFor(ranCommand, "the approved command's output");
  }, 60_000);
});

describe("questions on agy 1.2.x", () => {
  it("an answer in the TUI is the option's digit alone; over RPC, a leftover form is closed with the chosen option's digit", async () => {
    sim = await sim12(["--tui-stale-dialog", "stay"]);
    const followed = await attach(sim, "1.2.10");
    const ask = async (): Promise<Gate> => {
      expect((await followed.session.sendTurn("Help me start a project")).result).toBe("delivered");
      const gate = (await until(
        () =>
          followed.log
            .filter(isGate)
            .find((g) => g.request.kind === "question" && !followed.log.some((e) => e.type === "interaction_resolved" && e.interactionId === g.interactionId)),
        "an open question",
      )) as Gate;
      await sim!.waitForScreen((s) => s.includes("Question 1/1:") && s.includes("3. A library"), "the question form");
      sim!.resetRecording();
      return gate;
    };
    const first = await ask();
    expect(await followed.session.answer(first.interactionId, { optionIds: ["3"], via: "tui" })).toEqual({
      result: "delivered",
      stepIndex: first.stepIndex,
      via: "tui",
    });
    expect(flat(sim.keysSent())).toEqual(["3"]);
    expect(await followed.waitFor((e) => e.type === "interaction_resolved" && e.interactionId === first.interactionId, "the first answer")).toMatchObject({
      outcome: "answered",
    });
    await followed.waitFor(turnEnded, "the first turn's end");
    await sim.waitForScreen((s) => /^>\s*$/m.test(s), "the composer back");

    const second = await ask();
    expect(await followed.session.answer(second.interactionId, { optionIds: ["2"] })).toMatchObject({ result: "delivered", prompt: { result: "closed" } });
    expect(flat(sim.keysSent())).toEqual(["2"]);
  }, 90_000);
});

describe("stale dialogs where no key is safe", () => {
  it("unknown version: leaves the dialog, says so in a stale_dialog diagnostic, and sendTurn refuses until closeStale", async () => {
    sim = await sim12(["--tui-stale-dialog", "stay"]);
    const followed = await attach(sim, null);
    const gate = await gateUp(sim, followed);
    const result = await followed.session.approve(gate.interactionId);
    expect(result).toMatchObject({ result: "delivered", prompt: { result: "left_open", reason: expect.stringContaining("left open") } });
    expect(sim.keysSent()).toEqual([]);
    const diagnostic = await followed.waitFor((e) => e.type === "diagnostic" && e.code === "stale_dialog", "the stale_dialog diagnostic");
    expect(diagnostic).toMatchObject({ message: expect.stringMatching(/^agy kept .* drawn after the answer over RPC/) });
    await followed.waitFor(ranCommand, "the approved command's output");
    await followed.waitFor(turnEnded, "the end of the turn");
    expect(dialog12(await sim.screen())).toBe(true);

    const refused = await followed.session.sendTurn("2 more things");
    expect(refused).toMatchObject({ result: "failed", reason: expect.stringContaining("--close-stale") });
    expect(sim.keysSent()).toEqual([]);
    expect(sim.pastes()).toBe(0);

    const closed = await followed.session.sendTurn("2 more things", { closeStale: true });
    expect(closed.result).toBe("delivered");
    expect(flat(sim.keysSent())[0]).toBe("Escape");
    const user = await followed.waitFor((e) => e.type === "user_message" && e.text === "2 more things", "the second turn");
    expect(user).toBeDefined();
  }, 60_000);
});

describe("turns on agy 1.2.x", () => {
  it("a digit-leading turn is never typed while a dialog holds the keyboard: it cannot answer it", async () => {
    sim = await sim12();
    const followed = await attach(sim, "1.2.10");
    await gateUp(sim, followed);
    const result = await followed.session.sendTurn("4 reasons to stop");
    expect(result).toMatchObject({ result: "failed" });
    expect(sim.keysSent()).toEqual([]);
    expect(sim.pastes()).toBe(0);
    expect(dialog12(await sim.screen())).toBe(true);
    expect((await followed.session.pending()).length).toBe(1);
    expect(followed.log.some(resolved)).toBe(false);
  }, 60_000);

  it("a multi-line, digit-leading turn goes in as one bracketed paste and one CR, and arrives as one message", async () => {
    sim = await sim12();
    const followed = await attach(sim, "1.2.10");
    sim.resetRecording();
    const text = "1. say hello\n2. say goodbye\n3. stop";
    expect((await followed.session.sendTurn(text)).result).toBe("delivered");
    expect(sim.pastes()).toBe(1);
    expect(sim.keysSent()).toEqual([["Enter"]]);
    const users = await until(
      () => {
        const seen = followed.log.filter((e) => e.type === "user_message");
        return seen.length > 0 ? seen : undefined;
      },
      "the turn's user_message",
      { seen: () => followed.log.map((e) => e.type).join(", ") },
    );
    expect(users).toEqual([expect.objectContaining({ text })]);
  }, 60_000);
});

describe("the row is chosen per session's version", () => {
  it("on the same kind of leftover dialog: Escape for agy 1.0.x, nothing for 1.1.x", async () => {
    for (const [agyVersion, keys, outcome] of [
      ["1.0.10", ["Escape"], "closed"],
      ["1.1.27", [], "left_open"],
    ] as const) {
      sim = await startSimPane(["--tui-version", "1.1", "--tui-stale-dialog", "stay"]);
      const followed = await attach(sim, agyVersion);
      expect((await followed.session.sendTurn("Run pwd")).result).toBe("delivered");
      const gate = (await followed.waitFor(isGate, "the gate")) as Gate;
      await sim.waitForScreen((s) => /^> 1\. Yes/m.test(s) && s.includes("4. No"), "the 1.1 command dialog");
      sim.resetRecording();
      expect(await followed.session.approve(gate.interactionId)).toMatchObject({ result: "delivered", prompt: { result: outcome } });
      expect(flat(sim.keysSent())).toEqual(keys);
      await followed.waitFor(ranCommand, "the approved command's output");
      await sim.dispose();
      sim = undefined;
    }
  }, 120_000);
});
