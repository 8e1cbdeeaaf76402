import { describe, expect, it } from "vitest";
import { createKeyer, eventKey, parseCommand } from "../../src/fleet/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";

const c = "conv-1";

describe("event keys", () => {
  it("are built from the ids the events carry", () => {
    expect(
      eventKey({
        type: "function_call_output",
        conversationId: c,
        trajectoryId: "t",
        stepIndex: 4,
        callId: "agy_call_t_4",
        name: "run_command",
        output: "",
        isError: false,
        stepStatus: "DONE",
      }),
    ).toBe("function_call_output:agy_call_t_4");
    expect(
      eventKey({
        type: "message_delta",
        conversationId: c,
        trajectoryId: "t",
        stepIndex: 5,
        messageId: "m5",
        index: 3,
        text: "x",
        replace: false,
        final: false,
      }),
    ).toBe("message_delta:m5:3");
    expect(eventKey({ type: "user_message", conversationId: c, trajectoryId: "t", stepIndex: 0, text: "hi" })).toBe("user_message:t:0");
    expect(eventKey({ type: "history_end", conversationId: c })).toBeUndefined();
    expect(
      eventKey({
        type: "policy_delivered",
        conversationId: c,
        trajectoryId: "t",
        stepIndex: 6,
        interactionId: "int_6",
        decision: "approve",
        rule: null,
        decidedBy: "policy:default",
        result: "failed",
        reason: "x",
      }),
    ).toBe("policy_delivered:int_6");
  });

  it("place a status without a step after the latest step the conversation reported", () => {
    const keyer = createKeyer();
    const events: MapperEvent[] = [
      { type: "status", conversationId: c, status: "idle", reason: "run_idle" },
      { type: "user_message", conversationId: c, trajectoryId: "t", stepIndex: 0, text: "hi" },
      { type: "status", conversationId: c, status: "idle", reason: "run_idle" },
    ];
    expect(events.map((e) => keyer.key(e))).toEqual(["status:idle:run_idle:start", "user_message:t:0", "status:idle:run_idle:t:0"]);
  });

  it("tell a timed-out prompt's retry from the prompt (a new interactionId)", () => {
    const gate = (stepIndex: number, interactionId: string): MapperEvent => ({
      type: "interaction_requested",
      conversationId: c,
      trajectoryId: "t",
      stepIndex,
      interactionId,
      stepType: "RUN_COMMAND",
      callId: `agy_call_t_${stepIndex}`,
      request: { kind: "permission", action: "command", target: "pwd", description: "" },
    });
    expect(eventKey(gate(6, "int_a"))).not.toBe(eventKey(gate(8, "int_b")));
  });
});

describe("reading a command entry", () => {
  const base = { requestId: "r", conversationId: c, principal: "bot" };
  it("reads an answer with options and a write-in", () => {
    const parsed = parseCommand(
      new Map(Object.entries({ ...base, type: "answer", interactionId: "int_a", body: JSON.stringify({ options: ["1"], writeIn: "more" }) })),
    );
    expect(parsed).toEqual({ ok: true, command: { ...base, type: "answer", interactionId: "int_a", optionIds: ["1"], writeIn: "more" } });
  });

  it("refuses a body that is not an object, and a principal with control characters", () => {
    expect(parseCommand(new Map(Object.entries({ ...base, type: "interrupt", body: "[1]" })))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/must be a JSON object/),
    });
    expect(parseCommand(new Map(Object.entries({ ...base, principal: "bot\u001b[31m", type: "interrupt" })))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/names no principal/),
    });
  });

  it("holds an answer to the limits every door holds it to (the one Verdict), and takes what fits", () => {
    const entry = (type: string, body: unknown) => new Map(Object.entries({ ...base, type, interactionId: "int_a", body: JSON.stringify(body) }));
    const tooLong = "x".repeat(65_537);
    for (const [type, body, field] of [
      ["deny", { instruction: tooLong }, '"instruction"'],
      ["answer", { options: ["1"], writeIn: tooLong }, '"writeIn"'],
      ["answer", { options: Array.from({ length: 65 }, (_, i) => String(i)) }, '"optionIds"'],
      ["answer", { options: ["o".repeat(65)] }, '"optionIds.0"'],
      ["approve", { scope: "s".repeat(201) }, '"scope"'],
    ] as const) {
      const parsed = parseCommand(entry(type, body));
      expect(parsed.ok, `${type} ${field}`).toBe(false);
      expect((parsed as { reason: string }).reason).toContain(`the ${type} command's body does not fit: Fix ${field}`);
    }
    expect(parseCommand(entry("deny", { instruction: "x".repeat(65_536) }))).toMatchObject({ ok: true, command: { type: "deny" } });
    expect(parseCommand(entry("approve", { scope: "PERMISSION_SCOPE_CONVERSATION" }))).toEqual({
      ok: true,
      command: { ...base, type: "approve", interactionId: "int_a", scope: "PERMISSION_SCOPE_CONVERSATION" },
    });
  });
});
