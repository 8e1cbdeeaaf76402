/**
 * `agy-bridge mcp`: an instruction for the model travels only where agy's
 * answer has a field for it (a permission's deny). An approve with one, or a
 * question's decline with one, is an MCP tool error with a sentence, and
 * nothing reaches agy — the request stays open for a proper answer. Through
 * the MCP SDK's own client over stdio, against the simulator.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startMcpWorld, structured, textOf, type McpWorld } from "./support/mcp-world.js";

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Gate {
  pending: Array<{ interactionId: string; request: { kind: string } }>;
}

describe("agy-bridge mcp: instructions agy cannot carry", { timeout: 120_000 }, () => {
  // Skipped until src/mcp/tools.ts hands approve's `instruction` to answerAsAgent (today it drops it, and the approve is delivered).
  it("refuses an approve with an instruction, sends nothing, and still takes the approve without one", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "instructor" });
    const w = world;
    await w.call("send_turn", { text: "Run pwd" });
    const gate = structured<Gate>(await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }));
    const interactionId = gate.pending[0]!.interactionId;
    expect(gate.pending[0]!.request.kind).toBe("permission");

    const refused = await w.call("approve", { interactionId, instruction: "Print it twice." });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      `agy's approval carries no instruction for the model, so it would be dropped and nothing was sent; approve interaction ${interactionId} without one, or deny it with the instruction.`,
    );
    const still = structured<Gate>(await w.call("wait_for", { until: "pending_interaction", timeoutMs: 1_000 }));
    expect(still.pending.map((p) => p.interactionId)).toEqual([interactionId]);

    expect(structured(await w.call("approve", { interactionId }))).toMatchObject({ result: "delivered", decidedBy: "mcp:instructor" });
  });

  it("refuses a question's decline with an instruction, and declines it without one", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "instructor" });
    const w = world;
    await w.call("send_turn", { text: "Help me start a project" });
    const gate = structured<Gate>(await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }));
    const interactionId = gate.pending[0]!.interactionId;
    expect(gate.pending[0]!.request.kind).toBe("question");

    const refused = await w.call("deny", { interactionId, instruction: "Pick for me." });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      `agy's decline of a question carries no instruction for the model, so nothing was sent; deny interaction ${interactionId} without one, or answer it with writeIn.`,
    );
    const still = structured<Gate>(await w.call("wait_for", { until: "pending_interaction", timeoutMs: 1_000 }));
    expect(still.pending.map((p) => p.interactionId)).toEqual([interactionId]);

    expect(structured(await w.call("deny", { interactionId }))).toMatchObject({ result: "delivered", decidedBy: "mcp:instructor" });
  });
});
