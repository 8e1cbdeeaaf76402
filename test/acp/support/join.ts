/** The editor's first steps: `initialize`, then `session/new` on the only attended session. */
import type { AcpWorld } from "./acp-world.js";

export async function initialize(w: AcpWorld) {
  return w.connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "acp-test", version: "1" } });
}

export async function join(w: AcpWorld, cwd = "/nowhere/in/particular"): Promise<string> {
  await initialize(w);
  const created = await w.connection.agent.request("session/new", { cwd, mcpServers: [] });
  return created.sessionId;
}

export function prompt(w: AcpWorld, sessionId: string, text: string) {
  return w.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
}
