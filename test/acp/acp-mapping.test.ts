/**
 * The pure parts of the ACP front door: which session `session/new` joins,
 * how the mapper's events become `session/update`s, the permission options
 * and how the editor's choice is read back.
 */
import { describe, expect, it } from "vitest";
import { chooseConversation, clientName, namedConversation } from "../../src/acp/index.js";
import { permissionOptions, questionOptions, readChoice } from "../../src/acp/permission-options.js";
import { createUpdateMapper } from "../../src/acp/update-mapper.js";
import { stopReasonOf } from "../../src/acp/turn.js";
import type { MapperEvent } from "../../src/mapper/index.js";

const base = { conversationId: "c", trajectoryId: "t", stepIndex: 2, messageId: "m" };

describe("choosing the conversation", () => {
  const a = { conversationId: "a", workspace: "/work/app" };
  const b = { conversationId: "b", workspace: "/work/app/packages/ui" };
  const c = { conversationId: "c" };

  it("joins the session whose workspace is the editor's folder, or the deepest one holding it", () => {
    expect(chooseConversation([a, b, c], "/work/app/")).toMatchObject({ chosen: "a" });
    expect(chooseConversation([a, b, c], "/work/app/packages/ui/src")).toMatchObject({ chosen: "b" });
    expect(chooseConversation([a, b, c], "/work/app/docs")).toMatchObject({ chosen: "a" });
  });

  it("joins the only one when no workspace matches, and lists the candidates otherwise", () => {
    expect(chooseConversation([c], "/elsewhere")).toMatchObject({ chosen: "c", how: "the only attended agy session" });
    const choice = chooseConversation([a, c], "/elsewhere");
    expect(choice).toMatchObject({ candidates: [a, c] });
    expect("error" in choice && choice.error).toContain("a (in /work/app); c");
    expect(chooseConversation([], "/x")).toMatchObject({ error: expect.stringContaining("No attended agy session was found") });
    expect(chooseConversation([a, { conversationId: "d", workspace: "/work/app" }], "/work/app")).toMatchObject({
      error: expect.stringContaining("2 attended agy sessions"),
    });
  });

  it("reads the conversation an editor names in _meta, and nothing else", () => {
    expect(namedConversation({ agyBridge: { conversationId: "x" } })).toBe("x");
    for (const meta of [undefined, null, "x", { agyBridge: "x" }, { agyBridge: { conversationId: 3 } }, { agyBridge: { conversationId: "" } }])
      expect(namedConversation(meta)).toBeUndefined();
  });
});

describe("events as session updates", () => {
  it("sends deltas as chunks and never the committed message again", () => {
    const m = createUpdateMapper();
    const out = [
      ...m.map({ type: "message_delta", ...base, index: 0, text: "Hello ", replace: false, final: false }),
      ...m.map({ type: "message_delta", ...base, index: 1, text: "world", replace: false, final: true }),
      ...m.map({ type: "message", ...base, role: "assistant", text: "Hello world", failed: false }),
    ];
    expect(out).toEqual([
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hello " } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "world" } },
    ]);
  });

  it("shows a rewritten answer whole once it commits (chunks only append)", () => {
    const m = createUpdateMapper();
    m.map({ type: "message_delta", ...base, index: 0, text: "Draft", replace: false, final: false });
    expect(m.map({ type: "message_delta", ...base, index: 1, text: "Final", replace: true, final: false })).toEqual([]);
    expect(m.map({ type: "message", ...base, role: "assistant", text: "Final answer", failed: false })).toEqual([
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "\n\nFinal answer" } },
    ]);
  });

  it("gives a replayed message (no deltas) whole, and a person's turn as a user chunk", () => {
    const m = createUpdateMapper();
    expect(m.map({ type: "message", ...base, role: "assistant", text: "Done.", failed: false })).toEqual([
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } },
    ]);
    expect(m.map({ type: "user_message", conversationId: "c", trajectoryId: "t", text: "hi" })).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } },
    ]);
  });

  it("maps a file read to a read tool call with its location, and its output to the update that completes it", () => {
    const m = createUpdateMapper();
    const call: MapperEvent = {
      type: "function_call",
      ...base,
      callId: "k",
      name: "view_file",
      arguments: JSON.stringify({ AbsolutePath: "/home/me/a.ts" }),
      description: "Reading a.ts",
    };
    expect(m.map(call)).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "k",
        title: "Reading a.ts",
        kind: "read",
        status: "in_progress",
        rawInput: { AbsolutePath: "/home/me/a.ts" },
        locations: [{ path: "/home/me/a.ts" }],
      },
    ]);
    expect(m.map({ type: "function_call_output", ...base, callId: "k", name: "view_file", output: "text", isError: false, stepStatus: "DONE" })).toEqual([
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "k",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "text" } }],
        rawOutput: { stepStatus: "DONE" },
      },
    ]);
  });

  it("announces a gate's call as pending once, and its later call as an update of it", () => {
    const m = createUpdateMapper();
    const gate = {
      type: "interaction_requested" as const,
      ...base,
      interactionId: "i",
      stepType: "RUN_COMMAND",
      callId: "k",
      request: { kind: "permission" as const, action: "command", target: "ls -la", description: "" },
    };
    expect(m.announceGate(gate)).toMatchObject([{ sessionUpdate: "tool_call", toolCallId: "k", title: "ls -la", kind: "execute", status: "pending" }]);
    expect(m.announceGate(gate)).toEqual([]);
    expect(m.map({ type: "function_call", ...base, callId: "k", name: "run_command", arguments: JSON.stringify({ CommandLine: "ls -la" }) })).toMatchObject([
      { sessionUpdate: "tool_call_update", toolCallId: "k", title: "ls -la", kind: "execute" },
    ]);
  });
});

describe("permission options", () => {
  it("offers agy's conversation scope only where the gate takes one", () => {
    const permission = { kind: "permission" as const, action: "command", target: "ls", description: "" };
    expect(permissionOptions(permission).map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"]);
    expect(permissionOptions({ ...permission, variant: "runCommand" }).map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
  });

  it("reads back only what was offered: another option id is cancelled, never a guess", () => {
    const offered = questionOptions(
      [
        { id: "1", text: "A" },
        { id: "2", text: "B" },
      ],
      new Set(["1"]),
      true,
    );
    expect(offered.map((o) => o.optionId)).toEqual(["pick:2", "done", "dismiss"]);
    expect(readChoice({ outcome: "selected", optionId: "pick:2" }, offered)).toEqual({ action: "pick", optionId: "2" });
    expect(readChoice({ outcome: "selected", optionId: "pick:1" }, offered)).toEqual({ action: "cancelled" });
    expect(readChoice({ outcome: "selected", optionId: "allow" }, offered)).toEqual({ action: "cancelled" });
    expect(readChoice({ outcome: "cancelled" }, offered)).toEqual({ action: "cancelled" });
    expect(
      readChoice(
        { outcome: "selected", optionId: "allow_conversation" },
        permissionOptions({ kind: "permission", action: "file", target: "/x", description: "", variant: "filePermission" }),
      ),
    ).toEqual({ action: "approve", scope: "PERMISSION_SCOPE_CONVERSATION" });
  });
});

describe("small readings", () => {
  it("names the client safely in decidedBy", () => {
    expect(clientName("Zed")).toBe("Zed");
    expect(clientName("my editor\u001b[31m")).toBe("my-editor31m");
    expect(clientName(undefined)).toBe("client");
    expect(clientName("\u0007")).toBe("client");
  });

  it("reads agy's stop reasons", () => {
    expect(stopReasonOf("STOP_REASON_MAX_TOKENS")).toBe("max_tokens");
    expect(stopReasonOf("STOP_REASON_CONTENT_FILTER")).toBe("refusal");
    expect(stopReasonOf("STOP_REASON_ERROR")).toBeUndefined();
    expect(stopReasonOf(undefined)).toBeUndefined();
  });
});
