import { describe as group, expect, it } from "vitest";
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
      expect(result).toEqual({ result: "delivered", stepIndex: gate.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
      const output = world.log.find((e) => e.type === "function_call_output");
      expect(output).toMatchObject({ output: "/home/sim/project\n", isError: false });
      const resolved = world.log.filter((e) => e.type === "interaction_resolved");
      expect(resolved).toHaveLength(1);
      expect(resolved[0]).toMatchObject({ outcome: "answered", interactionId: gate.interactionId });
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
