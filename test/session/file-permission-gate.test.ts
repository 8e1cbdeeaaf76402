/**
 * A `filePermission` gate (agy's schema, spike-notes §11), answered over RPC
 * in its own variant against the simulator's "Read my shell profile" scenario.
 */
import { describe as group, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld, type World } from "./support/session-world.js";
import type { MapperEvent } from "../../src/mapper/index.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

async function fileGate(world: World): Promise<Requested> {
  world.sim.engine.tuiPort().submitTurn("Read my shell profile");
  const gate = await world.waitFor(isRequested, "the file permission gate");
  expect(gate.request).toMatchObject({ kind: "permission", variant: "filePermission", target: "file:///home/sim/.bashrc" });
  return gate;
}

/** The answer agy echoed on the gate's step, as the simulator stored it. */
function echoedAnswer(world: World, stepIndex: number): Record<string, unknown> | undefined {
  const conv = world.sim.engine.conversation(world.session.conversationId);
  const step = conv?.steps[stepIndex] as { completedInteractions?: Array<{ response?: Record<string, unknown> }> } | undefined;
  return step?.completedInteractions?.at(-1)?.response;
}

const isViewFileOutput = (e: MapperEvent): boolean => e.type === "function_call_output" && e.name === "view_file";

group("a filePermission gate over RPC", () => {
  it("approves it: delivered, the step leaves WAITING and the file is read", async () => {
    const world = await startWorld();
    try {
      const gate = await fileGate(world);
      expect(await world.session.approve(gate.interactionId)).toEqual({ result: "delivered", stepIndex: gate.stepIndex });
      const resolved = await world.waitFor((e) => e.type === "interaction_resolved", "the gate's resolution");
      expect(resolved).toMatchObject({ interactionId: gate.interactionId, outcome: "approved" });
      expect(world.sim.engine.conversation(world.session.conversationId)!.waitingIndices()).toEqual([]);
      const output = await world.waitFor(isViewFileOutput, "the view_file output");
      expect(output).toMatchObject({ stepIndex: gate.stepIndex, isError: false });
      expect(JSON.parse((output as Extract<MapperEvent, { type: "function_call_output" }>).output)).toMatchObject({
        absolutePathUri: "file:///home/sim/.bashrc",
        numLines: 12,
      });
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(world.log.filter((e) => e.type === "message").map((e) => (e as { text: string }).text)).toEqual(["Your shell profile sets PATH and two aliases."]);
      expect(echoedAnswer(world, gate.stepIndex)?.["filePermission"]).toEqual({ allow: true });
    } finally {
      await world.close();
    }
  });

  it("denies it: delivered, declined, and the file is never read", async () => {
    const world = await startWorld();
    try {
      const gate = await fileGate(world);
      expect(await world.session.deny(gate.interactionId)).toEqual({ result: "delivered", stepIndex: gate.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
      // The denied step settles without a file body: whatever output it maps to names no file read.
      const outputs = world.log.filter(isViewFileOutput).map((e) => (e as Extract<MapperEvent, { type: "function_call_output" }>).output);
      expect(outputs.filter((o) => o.includes("numLines") || o.includes(".bashrc"))).toEqual([]);
      expect(world.log.filter((e) => e.type === "message").map((e) => (e as { text: string }).text)).toEqual([
        "I was not allowed to read ~/.bashrc, so I left it alone.",
      ]);
      // proto3 JSON leaves out a false `allow`, as agy does (spike-notes §3.5): the echo of a deny is empty.
      expect(echoedAnswer(world, gate.stepIndex)?.["filePermission"]).toEqual({});
    } finally {
      await world.close();
    }
  });

  it("passes an approval's scope through as given", async () => {
    const world = await startWorld();
    try {
      const gate = await fileGate(world);
      const result = await world.session.approve(gate.interactionId, { scope: "PERMISSION_SCOPE_CONVERSATION" });
      expect(result.result).toBe("delivered");
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(echoedAnswer(world, gate.stepIndex)?.["filePermission"]).toEqual({ allow: true, scope: "PERMISSION_SCOPE_CONVERSATION" });
    } finally {
      await world.close();
    }
  });

  it("refuses an instruction for the model on a deny, sending nothing", async () => {
    const world = await startWorld();
    try {
      const gate = await fileGate(world);
      await expect(world.session.deny(gate.interactionId, { instruction: "Use the project's .env instead." })).rejects.toThrow(
        /filePermission gate, which takes no instruction for the model; deny it without one\.$/,
      );
      expect(world.sim.engine.conversation(world.session.conversationId)!.waitingIndices()).toEqual([gate.stepIndex]);
    } finally {
      await world.close();
    }
  });
});
