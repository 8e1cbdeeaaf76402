/**
 * MCP `list_sessions` says which agy each session runs (spike-notes §14 #2,
 * #12): a real `agy-bridge mcp` subprocess over stdio, against the simulator
 * running as agy in a private tmux server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startMcpWorld, structured, type McpWorld } from "./support/mcp-world.js";

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("agy's version in MCP list_sessions", { timeout: 120_000 }, () => {
  it("lists agyVersion and simulator for the simulated agy", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "version-test" });
    const { sessions } = structured<{ sessions: Array<Record<string, unknown>> }>(await world.call("list_sessions"));
    const ours = sessions.find((s) => s["default"] === true);
    expect(ours, JSON.stringify(sessions)).toMatchObject({ agyVersion: "1.0.10", simulator: true });
  });
});
