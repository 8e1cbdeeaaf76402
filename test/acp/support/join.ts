/** The editor's first steps: `initialize`, then `session/new` on the only attended session. */
import type { ClientCapabilities } from "@agentclientprotocol/sdk";
import type { AcpWorld } from "./acp-world.js";

export async function initialize(w: AcpWorld, clientCapabilities: ClientCapabilities = {}) {
  return w.connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities, clientInfo: { name: "acp-test", version: "1" } });
}

export async function join(w: AcpWorld, cwd = "/nowhere/in/particular", clientCapabilities: ClientCapabilities = {}): Promise<string> {
  await initialize(w, clientCapabilities);
  const created = await w.connection.agent.request("session/new", { cwd, mcpServers: [] });
  return created.sessionId;
}

/** Sends a prompt; fails after `timeoutMs` saying what the editor had seen, rather than hanging the test. */
export async function prompt(w: AcpWorld, sessionId: string, text: string, timeoutMs = 60_000) {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const kinds = w.updates.map((n) => n.update.sessionUpdate).join(", ");
      reject(
        new Error(
          `the prompt "${text}" did not end within ${timeoutMs} ms; updates: [${kinds}]; permission requests: ${w.permissionRequests.length}; stderr: ${w.stderr()}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([w.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }), bound]);
  } finally {
    clearTimeout(timer);
  }
}
