/**
 * MCP `wait_for` and `list_sessions` say what the session waits for: a real
 * `agy-bridge mcp` subprocess over stdio, against the simulator running as
 * agy, asked to run a command.
 */
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.js";
import { startMcpWorld, structured, type McpWorld } from "./support/mcp-world.js";

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Listed {
  conversationId: string;
  default: boolean;
  status: string;
  waitingFor?: string;
}

describe("waitingFor over MCP", { timeout: 120_000 }, () => {
  it("gives permission from wait_for and list_sessions while the command waits, and none once it is approved", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "waiting-test" });
    const w = world;
    const listed = async () => structured<{ sessions: Listed[] }>(await w.call("list_sessions")).sessions.find((s) => s.default);
    const before = await listed();
    expect(before, "the default session").toBeDefined();
    expect(Object.hasOwn(before!, "waitingFor")).toBe(false);

    const turn = structured<{ result: string; cursor: string }>(await w.call("send_turn", { text: "Run pwd" }));
    expect(turn.result).toBe("delivered");
    const gate = structured<{ outcome: string; waitingFor?: string; pending: Array<{ interactionId: string }> }>(
      await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }),
    );
    expect(gate).toMatchObject({ outcome: "pending_interaction", waitingFor: "permission" });
    const waiting = await until(
      async () => {
        const s = await listed();
        return s?.status === "waiting" ? s : undefined;
      },
      "list_sessions to say waiting",
      { ms: 30_000 },
    );
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: "permission" });

    await w.call("approve", { conversationId: waiting.conversationId, interactionId: gate.pending[0]!.interactionId });
    const idle = structured<Record<string, unknown>>(await w.call("wait_for", { until: "idle", since: turn.cursor, timeoutMs: 30_000 }));
    expect(idle).toMatchObject({ outcome: "idle", status: "idle" });
    expect(Object.hasOwn(idle, "waitingFor")).toBe(false);
    const after = await listed();
    expect(Object.hasOwn(after!, "waitingFor")).toBe(false);
  });
});
