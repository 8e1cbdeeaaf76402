import { afterEach, describe as group, expect, it } from "vitest";
import { ranCommand, startSimPane, type SimPane } from "../tmux/support/sim-pane.js";
import { isRequested, isTurnEnd, startWorld } from "./support/session-world.js";
import type { MapperEvent } from "../../src/mapper/index.js";

group("answering interactions", () => {
  it("runs a full turn with an approval delivered over RPC", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the permission gate");
      expect(gate.request.kind).toBe("permission");
      const result = await world.session.approve(gate.interactionId);
      // No pane: nothing is pressed in a TUI, so the result says nothing about a dialog.
      expect(result).toEqual({ result: "delivered", stepIndex: gate.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
      const output = world.log.find((e) => e.type === "function_call_output");
      expect(output).toMatchObject({ output: "/home/sim/project\n", isError: false });
      const resolved = world.log.filter((e) => e.type === "interaction_resolved");
      expect(resolved).toHaveLength(1);
      expect(resolved[0]).toMatchObject({ outcome: "approved", interactionId: gate.interactionId });
    } finally {
      await world.close();
    }
  });

  it("reports already_resolved and delivers nothing when an interaction is answered twice, also concurrently", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the permission gate");
      const [a, b] = await Promise.all([world.session.approve(gate.interactionId), world.session.approve(gate.interactionId)]);
      const results = [a.result, b.result].sort();
      expect(results).toEqual(["already_resolved", "delivered"]);
      const again = await world.session.deny(gate.interactionId);
      expect(again.result).toBe("already_resolved");
      await world.waitFor(isTurnEnd, "the end of the turn");
      const conv = world.sim.engine.conversation(world.session.conversationId)!;
      const step = conv.steps[gate.stepIndex] as { completedInteractions?: unknown[] };
      expect(step.completedInteractions).toHaveLength(1);
    } finally {
      await world.close();
    }
  });

  it("denies a command with an instruction for the model", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Delete the build directory");
      const gate = await world.waitFor(isRequested, "the permission gate");
      const result = await world.session.deny(gate.interactionId, { instruction: "Keep the build directory." });
      expect(result.result).toBe("delivered");
      const resolved = await world.waitFor((e) => e.type === "interaction_resolved", "the resolution");
      expect(resolved).toMatchObject({ outcome: "denied" });
      const response = (resolved as Extract<MapperEvent, { type: "interaction_resolved" }>).response;
      expect(response?.["permission"]).toMatchObject({ userDenyInstruction: "Keep the build directory." });
      expect((response?.["permission"] as { allow?: boolean }).allow ?? false).toBe(false);
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });

  it("answers a question with an option, sending the question text verbatim", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Help me start a project");
      const gate = await world.waitFor(isRequested, "the question");
      if (gate.request.kind !== "question") throw new Error("expected a question");
      const result = await world.session.answer(gate.interactionId, { optionIds: ["2"] });
      expect(result.result).toBe("delivered");
      const resolved = (await world.waitFor((e) => e.type === "interaction_resolved", "the resolution")) as Extract<
        MapperEvent,
        { type: "interaction_resolved" }
      >;
      expect(resolved.response?.["askQuestion"]).toEqual({
        responses: [{ question: gate.request.questions[0]!.question, selectedOptionIds: ["2"] }],
      });
    } finally {
      await world.close();
    }
  });

  it("answers a question with a write-in only", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Help me start a project");
      const gate = await world.waitFor(isRequested, "the question");
      const result = await world.session.answer(gate.interactionId, { optionIds: [], writeIn: "A tiny CLI in Go" });
      expect(result.result).toBe("delivered");
      const resolved = (await world.waitFor((e) => e.type === "interaction_resolved", "the resolution")) as Extract<
        MapperEvent,
        { type: "interaction_resolved" }
      >;
      const responses = (resolved.response?.["askQuestion"] as { responses: Array<Record<string, unknown>> }).responses;
      expect(responses[0]).toMatchObject({ writeInResponse: "A tiny CLI in Go" });
    } finally {
      await world.close();
    }
  });

  it("refuses an option the question does not offer and a verdict of the wrong kind", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Help me start a project");
      const gate = await world.waitFor(isRequested, "the question");
      await expect(world.session.answer(gate.interactionId, { optionIds: ["99"] })).rejects.toThrow(/not offered/);
      await expect(world.session.approve(gate.interactionId)).rejects.toThrow(/is a question/);
      expect(world.sim.engine.conversation(world.session.conversationId)!.waitingIndices()).toEqual([gate.stepIndex]);
    } finally {
      await world.close();
    }
  });

  it("reports not_found for an id no step of the conversation has", async () => {
    const world = await startWorld();
    try {
      expect(await world.session.approve("int_0000000000000000")).toEqual({ result: "not_found" });
    } finally {
      await world.close();
    }
  });
});

group("answering in agy's TUI (via tui), the simulator in a real tmux pane", () => {
  let sim: SimPane | undefined;
  afterEach(async () => {
    await sim?.dispose();
    sim = undefined;
  });
  const gateOf = (e: MapperEvent): e is Extract<MapperEvent, { type: "interaction_requested" }> => e.type === "interaction_requested";

  it("approves by Enter on the highlighted 1. Yes, and the command runs", async () => {
    sim = await startSimPane();
    const { session, waitFor } = await sim.attach();
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    const gate = (await waitFor(gateOf, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    await sim.waitForScreen((s) => s.includes("4. No"), "the command dialog");
    sim.resetRecording();
    expect(await session.approve(gate.interactionId, { via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(sim.keysSent()).toEqual([["Enter"]]);
    await waitFor(ranCommand, "the command's output");
  }, 60_000);

  it("answers a question by moving the pointer to the chosen option, one Down at a time", async () => {
    sim = await startSimPane();
    const { session, waitFor } = await sim.attach();
    expect((await session.sendTurn("Help me start a project")).result).toBe("delivered");
    const gate = (await waitFor(gateOf, "the question")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    if (gate.request.kind !== "question") throw new Error("expected a question");
    await sim.waitForScreen((s) => s.includes("Navigate · enter Select"), "the question dialog");
    sim.resetRecording();
    expect(await session.answer(gate.interactionId, { optionIds: ["3"], via: "tui" })).toEqual({ result: "delivered", stepIndex: gate.stepIndex, via: "tui" });
    expect(sim.keysSent()).toEqual([["Down"], ["Down"], ["Enter"]]);
    const resolved = (await waitFor((e) => e.type === "interaction_resolved", "the resolution")) as Extract<MapperEvent, { type: "interaction_resolved" }>;
    expect(resolved.response?.["askQuestion"]).toMatchObject({ responses: [{ selectedOptionIds: ["3"] }] });
  }, 60_000);

  it("refuses what a dialog cannot carry (an instruction, a scope) before touching the pane", async () => {
    sim = await startSimPane();
    const { session, waitFor } = await sim.attach();
    expect((await session.sendTurn("Run pwd")).result).toBe("delivered");
    const gate = (await waitFor(gateOf, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    await sim.waitForScreen((s) => s.includes("4. No"), "the command dialog");
    sim.resetRecording();
    await expect(session.deny(gate.interactionId, { via: "tui", instruction: "Use ls instead." })).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(session.approve(gate.interactionId, { via: "tui", scope: "PERMISSION_SCOPE_CONVERSATION" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    expect(sim.keysSent()).toEqual([]);
    expect(await sim.screen()).toContain("4. No");
  }, 60_000);

  it("refuses via tui when no pane is known", async () => {
    sim = await startSimPane();
    const { session, waitFor } = await sim.attach({ pane: false });
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "-l", "Run pwd"]);
    await sim.world.tmux(["send-keys", "-t", sim.paneId, "Enter"]);
    const gate = (await waitFor(gateOf, "the gate")) as Extract<MapperEvent, { type: "interaction_requested" }>;
    await expect(session.approve(gate.interactionId, { via: "tui" })).rejects.toThrow(/needs agy's tmux pane/);
    expect(sim.keysSent()).toEqual([]);
  }, 60_000);
});
