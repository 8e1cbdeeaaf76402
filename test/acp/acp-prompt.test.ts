/**
 * `agy-bridge acp` end to end: the SDK's own client on a real stdio pipe,
 * the simulator as agy in a private tmux server, found by discovery.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startAcpWorld, type AcpWorld } from "./support/acp-world.js";

let world: AcpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function join(w: AcpWorld): Promise<string> {
  await w.connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "acp-test", version: "1" } });
  const created = await w.connection.agent.request("session/new", { cwd: "/nowhere/in/particular", mcpServers: [] });
  return created.sessionId;
}

describe("agy-bridge acp", { timeout: 120_000 }, () => {
  it("joins the only attended session, types the prompt into agy's TUI, streams the answer and ends the turn", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    const response = await w.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Say hello in one short sentence." }] });
    expect(response.stopReason, w.stderr()).toBe("end_turn");
    const chunks = w.updates.filter((n) => n.update.sessionUpdate === "agent_message_chunk");
    expect(chunks.length).toBeGreaterThan(1);
    expect(w.text("agent_message_chunk")).toMatch(/hello/i);
    // The editor's own prompt is not echoed back to it.
    expect(w.text("user_message_chunk")).toBe("");
    expect(w.updates.every((n) => n.sessionId === sessionId)).toBe(true);
    await w.tmux.waitForScreen("agy", (s) => s.includes("> Say hello in one short sentence."), "the prompt in agy's transcript");
  });
});
