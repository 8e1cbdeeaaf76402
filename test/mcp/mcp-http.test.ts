/**
 * `agy-bridge mcp --http` end to end: streamable HTTP at /mcp with serve's
 * bearer token and Host/Origin rules, driven by the MCP SDK's own client
 * against the simulator running as agy in a private tmux server.
 */
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpWorld, structured, type McpWorld } from "./support/mcp-world.js";
import { until } from "../support/until.js";

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** One POST of an initialize with exactly these headers (node's http lets a test set Host). */
function post(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")));
    req.on("error", reject);
    req.end(INITIALIZE);
  });
}

describe("agy-bridge mcp --http", { timeout: 120_000 }, () => {
  it("serves the same tools over streamable HTTP, with change notifications for a subscribed resource", async () => {
    world = await startMcpWorld({ transport: "http", clientName: "codex-test" });
    const w = world;
    const { sessions } = structured<{ sessions: Array<{ conversationId: string; default: boolean }> }>(await w.call("list_sessions"));
    const conversationId = sessions.find((s) => s.default)!.conversationId;
    const updates: string[] = [];
    w.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const pendingUri = `agy://sessions/${conversationId}/pending`;
    await w.client.subscribeResource({ uri: pendingUri });

    const turn = structured<{ result: string; cursor: string }>(await w.call("send_turn", { text: "Delete the build directory" }));
    expect(turn.result).toBe("delivered");
    const gate = structured<{ outcome: string; pending: Array<{ interactionId: string; request: { kind: string } }> }>(
      await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }),
    );
    expect(gate.outcome).toBe("pending_interaction");
    await until(() => updates.includes(pendingUri), "a resources/updated notification for the pending resource", { ms: 30_000, everyMs: 50 });
    const pending = await w.client.readResource({ uri: pendingUri });
    const body = JSON.parse(String((pending.contents[0] as { text: string }).text)) as { pending: Array<{ interactionId: string }> };
    expect(body.pending.map((p) => p.interactionId)).toEqual([gate.pending[0]!.interactionId]);

    const denied = structured(await w.call("deny", { interactionId: gate.pending[0]!.interactionId, instruction: "keep the build" }));
    expect(denied).toMatchObject({ result: "delivered", decidedBy: "mcp:codex-test" });
    const resolved = structured<{ outcome: string; event: { outcome: string; decidedBy: string } }>(
      await w.call("wait_for", { until: "event", eventType: "interaction_resolved", since: turn.cursor, timeoutMs: 30_000 }),
    );
    expect(resolved.event).toMatchObject({ outcome: "denied", decidedBy: "mcp:codex-test" });
    const idle = structured<{ outcome: string }>(await w.call("wait_for", { until: "idle", since: turn.cursor, timeoutMs: 30_000 }));
    expect(idle.outcome).toBe("idle");
    const read = structured<{ events: Array<{ event: { type: string; interactionId?: string } }> }>(await w.call("read_events", { since: turn.cursor }));
    expect(read.events.filter((e) => e.event.type === "interaction_requested").map((e) => e.event.interactionId)).toEqual([gate.pending[0]!.interactionId]);
    expect(read.events.filter((e) => e.event.type === "interaction_resolved")).toHaveLength(1);
    expect(w.stderr()).not.toContain(w.http!.token);
  });

  it("refuses a client without the token or with a wrong one, and serves one with it", async () => {
    world = await startMcpWorld({ transport: "http", withAgy: false });
    const w = world;
    const url = w.http!.url;
    const none = await post(url, {});
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(JSON.parse(none.body).error.message).toMatch(/send Authorization: Bearer <token>/);
    const wrong = await post(url, { authorization: "Bearer not-the-token-at-all-0000" });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain(w.http!.token);

    const stranger = new Client({ name: "stranger", version: "1" });
    await expect(stranger.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow();
    await stranger.close().catch(() => undefined);

    const right = await post(url, { authorization: `Bearer ${w.http!.token}` });
    expect(right.status).toBe(200);
    expect(right.headers["mcp-session-id"]).toBeTypeOf("string");
  });

  it("refuses a foreign Host and a foreign Origin, even with the token, and answers a Host allowed with --allow-host", async () => {
    world = await startMcpWorld({ transport: "http", withAgy: false, args: () => ["--allow-host", "bridge.internal"] });
    const w = world;
    const auth = { authorization: `Bearer ${w.http!.token}` };
    const host = await post(w.http!.url, { ...auth, host: "attacker.example:80" });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error.message).toMatch(/does not answer to the host name/);
    const origin = await post(w.http!.url, { ...auth, origin: "https://attacker.example" });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).error.message).toMatch(/a page on another origin/);
    const own = await post(w.http!.url, { ...auth, origin: new URL(w.http!.url).origin });
    expect(own.status).toBe(200);
    const allowed = await post(w.http!.url, { ...auth, host: `bridge.internal:${new URL(w.http!.url).port}` });
    expect(allowed.status).toBe(200);
  });
});
