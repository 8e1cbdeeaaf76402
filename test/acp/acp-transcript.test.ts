/**
 * A recorded transcript of a whole session — initialize, list, new, a prompt
 * with a gate, a multi-select question as a form, a cancel, load — every message in
 * both directions checked against the JSON schema the ACP SDK ships
 * (`@agentclientprotocol/sdk/schema/v1/schema.json`), as a whole message and
 * against the method's own params and result types.
 */
import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import { startAcpWorld, type AcpWorld } from "./support/acp-world.js";
import { join, prompt } from "./support/join.js";

const require = createRequire(import.meta.url);
// ajv comes with the MCP SDK; the schema is draft 2020-12.
const Ajv2020 = (require("ajv/dist/2020") as { default: new (options: object) => AjvLike }).default;
const SCHEMA = require("@agentclientprotocol/sdk/schema/v1/schema.json") as { $defs: Record<string, unknown> };

interface AjvLike {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
}

const TYPES: Readonly<Record<string, { params: string; result?: string }>> = {
  initialize: { params: "InitializeRequest", result: "InitializeResponse" },
  "session/new": { params: "NewSessionRequest", result: "NewSessionResponse" },
  "session/load": { params: "LoadSessionRequest", result: "LoadSessionResponse" },
  "session/list": { params: "ListSessionsRequest", result: "ListSessionsResponse" },
  "session/prompt": { params: "PromptRequest", result: "PromptResponse" },
  "session/cancel": { params: "CancelNotification" },
  "session/update": { params: "SessionNotification" },
  "session/request_permission": { params: "RequestPermissionRequest", result: "RequestPermissionResponse" },
  "elicitation/create": { params: "CreateElicitationRequest", result: "CreateElicitationResponse" },
};

function validators() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const whole = ajv.compile(SCHEMA);
  const byDef = new Map<string, ReturnType<AjvLike["compile"]>>();
  const def = (name: string) => {
    let v = byDef.get(name);
    if (v === undefined) {
      v = ajv.compile({ $ref: `#/$defs/${name}`, $defs: SCHEMA.$defs });
      byDef.set(name, v);
    }
    return v;
  };
  return { whole, def };
}

/** Every problem with the transcript: messages the schema refuses, methods without a known type. */
function check(wire: ReadonlyArray<{ from: string; message: AnyMessage }>): string[] {
  const { whole, def } = validators();
  const problems: string[] = [];
  const methodOf = new Map<string, string>();
  for (const { from, message } of wire) {
    const m = message as { id?: string | number; method?: string; params?: unknown; result?: unknown; error?: unknown };
    if (!whole(message)) problems.push(`${from} ${JSON.stringify(message).slice(0, 200)}: ${JSON.stringify(whole.errors).slice(0, 300)}`);
    if (m.method !== undefined) {
      if (m.id !== undefined) methodOf.set(`${from}:${m.id}`, m.method);
      const type = TYPES[m.method];
      if (type === undefined) {
        problems.push(`no type known for ${m.method}`);
        continue;
      }
      const v = def(type.params);
      if (!v(m.params ?? {})) problems.push(`${m.method} params: ${JSON.stringify(v.errors).slice(0, 300)}`);
    } else if (m.result !== undefined) {
      const asker = from === "agent" ? "client" : "agent";
      const method = methodOf.get(`${asker}:${m.id}`);
      const type = method === undefined ? undefined : TYPES[method]?.result;
      if (type === undefined) {
        problems.push(`a result for an unknown request ${String(m.id)} (${String(method)})`);
        continue;
      }
      const v = def(type);
      if (!v(m.result)) problems.push(`${method} result: ${JSON.stringify(v.errors).slice(0, 300)}`);
    }
  }
  return problems;
}

let world: AcpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("an ACP transcript", { timeout: 120_000 }, () => {
  it("is valid against the schema the SDK ships, in both directions", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w, "/nowhere", { elicitation: { form: {} } });
    await w.connection.agent.request("session/list", {});
    w.answerPermissions(() => ({ outcome: { outcome: "selected", optionId: "allow" } }));
    w.answerElicitations(() => ({ action: "accept", content: { choice: ["2", "4"] } }));
    expect((await prompt(w, sessionId, "Run pwd")).stopReason, w.stderr()).toBe("end_turn");
    expect((await prompt(w, sessionId, "Which features should I add?")).stopReason).toBe("end_turn");
    const long = prompt(w, sessionId, "Write a long essay about schemas");
    const seen = w.text("agent_message_chunk").length;
    await w.until(() => w.text("agent_message_chunk").length > seen, "the long answer to start");
    await w.connection.agent.notify("session/cancel", { sessionId });
    expect((await long).stopReason).toBe("cancelled");
    await w.connection.agent.request("session/load", { sessionId, cwd: "/nowhere", mcpServers: [] });

    const methods = new Set(w.wire.map((m) => (m.message as { method?: string }).method).filter((x) => x !== undefined));
    expect([...methods].sort()).toEqual([
      "elicitation/create",
      "initialize",
      "session/cancel",
      "session/list",
      "session/load",
      "session/new",
      "session/prompt",
      "session/request_permission",
      "session/update",
    ]);
    const kinds = new Set(w.updates.map((n) => n.update.sessionUpdate));
    for (const kind of ["agent_message_chunk", "user_message_chunk", "tool_call", "tool_call_update"]) expect(kinds).toContain(kind);
    expect(check(w.wire)).toEqual([]);
  });

  it("the check refuses what the schema refuses", () => {
    const prompt = {
      from: "client",
      message: { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } } as AnyMessage,
    };
    const cases: Array<Array<{ from: string; message: AnyMessage }>> = [
      [
        {
          from: "agent",
          message: {
            jsonrpc: "2.0",
            method: "session/update",
            params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "txt", text: "x" } } },
          } as AnyMessage,
        },
      ],
      [{ from: "client", message: { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { prompt: [] } } as AnyMessage }],
      [prompt, { from: "agent", message: { jsonrpc: "2.0", id: 1, result: { stopReason: "finished" } } as AnyMessage }],
    ];
    expect(check([prompt, { from: "agent", message: { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } } as AnyMessage }])).toEqual([]);
    for (const wire of cases) expect(check(wire), JSON.stringify(wire)).not.toEqual([]);
  });
});
