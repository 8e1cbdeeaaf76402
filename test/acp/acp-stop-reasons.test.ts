/**
 * How a prompt ends, for the endings the simulator cannot play: agy's
 * max-tokens and content-filter stops, a failed turn, agy going away; the
 * usage totals on the answer; prompts the agent refuses.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RequestError } from "@agentclientprotocol/sdk";
import { answer, CONVERSATION, idle, scriptedWorld, turnStart, type ScriptedWorld } from "./support/scripted-session.js";

let world: ScriptedWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function joined(w: ScriptedWorld): Promise<string> {
  await w.connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  return (await w.connection.agent.request("session/new", { cwd: "/", mcpServers: [] })).sessionId;
}

function ask(w: ScriptedWorld, sessionId: string, text: string) {
  return w.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
}

async function failure(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (error) {
    return error as RequestError;
  }
  throw new Error("the request succeeded");
}

describe("stop reasons", () => {
  it.each([
    ["STOP_REASON_MAX_TOKENS", "max_tokens"],
    ["STOP_REASON_CONTENT_FILTER", "refusal"],
    ["STOP_REASON_STOP_PATTERN", "end_turn"],
  ])("agy's %s ends the prompt with %s", async (agyReason, acpReason) => {
    world = scriptedWorld((text, emit) => emit(...turnStart(text), ...answer("cut", { stopReason: agyReason }), idle()));
    const sessionId = await joined(world);
    expect(sessionId).toBe(CONVERSATION);
    expect((await ask(world, sessionId, "go")).stopReason).toBe(acpReason);
  });

  it("a failed turn ends the prompt (end_turn) with agy's error shown as text", async () => {
    world = scriptedWorld((text, emit) =>
      emit(...turnStart(text), ...answer("[agy-bridge: the model did not complete this turn (status ERROR)]", { failed: true }), {
        type: "status",
        conversationId: CONVERSATION,
        trajectoryId: "t",
        status: "failed",
        reason: "turn_failed",
      }),
    );
    const sessionId = await joined(world);
    expect((await ask(world, sessionId, "go")).stopReason).toBe("end_turn");
    expect(world.updates.map((n) => n.update).find((u) => u.sessionUpdate === "agent_message_chunk")).toMatchObject({
      content: { text: expect.stringContaining("did not complete") },
    });
  });

  it("agy going away mid-turn fails the prompt with a sentence saying what to do", async () => {
    world = scriptedWorld((text, emit) => emit(...turnStart(text), { type: "status", conversationId: CONVERSATION, status: "failed", reason: "server_gone" }));
    const sessionId = await joined(world);
    const error = await failure(ask(world, sessionId, "go"));
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/language server is gone.*session\/load/);
  });

  it("waits for its own turn: an earlier turn's end does not end the prompt", async () => {
    world = scriptedWorld((text, emit) => emit(idle("run_idle"), ...turnStart("the person's turn"), idle(), ...turnStart(text), ...answer("mine"), idle()));
    const sessionId = await joined(world);
    const response = await ask(world, sessionId, "go");
    expect(response.stopReason).toBe("end_turn");
    expect(world.updates.map((n) => n.update.sessionUpdate)).toEqual(["user_message_chunk", "agent_message_chunk"]);
  });

  it("carries agy's token totals on the prompt's answer", async () => {
    world = scriptedWorld((text, emit) =>
      emit(
        ...turnStart(text),
        ...answer("hi"),
        {
          type: "usage",
          conversationId: CONVERSATION,
          trajectoryId: "t",
          stepIndex: 1,
          inputTokens: 120,
          outputTokens: 7,
          thinkingOutputTokens: 3,
          cacheReadTokens: 40,
        },
        idle(),
      ),
    );
    const sessionId = await joined(world);
    const response = await ask(world, sessionId, "go");
    expect(response._meta).toEqual({
      agyBridge: { delivery: "delivered", usage: { inputTokens: 120, outputTokens: 7, thinkingOutputTokens: 3, cacheReadTokens: 40 } },
    });
  });
});

describe("prompts the agent refuses", () => {
  it("refuses an image (agy's TUI takes text), an empty prompt and a second prompt while one runs", async () => {
    world = scriptedWorld(() => undefined);
    const sessionId = await joined(world);
    const image = await failure(
      world.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "image", data: "AA==", mimeType: "image/png" }] }),
    );
    expect([image.code, image.message]).toEqual([-32602, expect.stringContaining("takes text only")]);
    const empty = await failure(ask(world, sessionId, "   "));
    expect([empty.code, empty.message]).toEqual([-32602, expect.stringContaining("empty")]);
    const first = ask(world, sessionId, "never ends");
    await expect.poll(() => world!.calls).toContain("sendTurn never ends");
    const second = await failure(ask(world, sessionId, "again"));
    expect(second.message).toContain("already running");
    await world.connection.agent.notify("session/cancel", { sessionId });
    // Not started by agy yet: cancelled at once, nothing interrupted.
    expect((await first).stopReason).toBe("cancelled");
    expect(world.calls).not.toContain("interrupt");
  });
});
