/**
 * How a prompt's turn ends over ACP, and what the editor sees of the
 * conversation besides its own prompts: cancel mid-turn, a turn the person
 * types in agy's TUI, and `session/load` replaying the conversation.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startAcpWorld, type AcpWorld } from "./support/acp-world.js";
import { initialize, join, prompt } from "./support/join.js";

let world: AcpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("turns over ACP", { timeout: 120_000 }, () => {
  it("session/cancel mid-answer stops agy's turn and the prompt ends cancelled", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    const running = prompt(w, sessionId, "Write a long essay about patience");
    await w.until(() => w.text("agent_message_chunk").length > 0, "the first chunk of the answer");
    await w.connection.agent.notify("session/cancel", { sessionId });
    expect((await running).stopReason, w.stderr()).toBe("cancelled");
    const full =
      "Once upon a time there was a language server that answered every question slowly, one small chunk after another, so that impatient clients could practise pressing Escape.";
    expect(w.text("agent_message_chunk").length).toBeLessThan(full.length);
    // agy is idle again: the next prompt is taken and ends normally.
    expect((await prompt(w, sessionId, "Say hello in one short sentence.")).stopReason).toBe("end_turn");
  });

  it("session/cancel while a gate waits denies it, and the prompt ends cancelled", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    w.answerPermissions(
      (_request, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true })),
    );
    const running = prompt(w, sessionId, "Run pwd");
    await w.until(() => w.permissionRequests.length === 1, "the permission request");
    await w.connection.agent.notify("session/cancel", { sessionId });
    expect((await running).stopReason, w.stderr()).toBe("cancelled");
    const id = w.permissionRequests[0]!.toolCall.toolCallId;
    const last = w.updates
      .map((n) => n.update)
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id)
      .at(-1);
    expect(last).toMatchObject({ status: "failed", rawOutput: { declined: true } });
  });

  it("shows the editor a turn the person types in agy's TUI, and agy's answer to it", async () => {
    world = await startAcpWorld();
    const w = world;
    await join(w);
    await w.tmux.paste("agy", "Think about caching");
    await w.tmux.sendKeys("agy", "Enter");
    await w.until(() => w.text("user_message_chunk") === "Think about caching", "the person's turn as a user message chunk");
    await w.until(() => w.text("agent_message_chunk").length > 0 && w.text("agent_thought_chunk").length > 0, "agy's reasoning and answer");
  });

  it("refuses a prompt while agy's dialog holds the keyboard, and asks the editor about that gate instead", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    w.answerPermissions(
      (_request, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true })),
    );
    // The person's own turn raises a gate: the editor is asked about it too.
    await w.tmux.paste("agy", "Run pwd");
    await w.tmux.sendKeys("agy", "Enter");
    await w.tmux.waitForScreen("agy", (s) => s.includes("Do you want to proceed?"), "agy's permission dialog");
    await w.until(() => w.permissionRequests.length === 1, "the editor's permission request for the person's gate");
    const refused = await prompt(w, sessionId, "Say hello in one short sentence.").then(
      () => undefined,
      (error: { code?: number; message?: string }) => error,
    );
    expect(refused?.code, w.stderr()).toBe(-32603);
    expect(refused?.message).toContain("agy did not take the prompt: permission");
    expect(refused?.message).toContain('("pwd") waits for an answer');
    // Nothing was typed into the dialog: it still asks, and agy never saw the prompt.
    const screen = await w.tmux.capture("agy");
    expect(screen).toContain("Do you want to proceed?");
    expect(screen).not.toContain("Say hello");
  });

  it("session/load replays the conversation, then the session goes on live", async () => {
    world = await startAcpWorld();
    const w = world;
    // The person worked in agy before the editor came.
    await w.tmux.paste("agy", "Run pwd");
    await w.tmux.sendKeys("agy", "Enter");
    await w.tmux.waitForScreen("agy", (s) => s.includes("Do you want to proceed?"), "agy's permission dialog");
    await w.tmux.sendKeys("agy", "Enter");
    await w.tmux.waitForScreen("agy", (s) => s.includes("The current directory is") && s.includes("? for shortcuts"), "the turn's answer");
    await initialize(w);
    const { sessions } = await w.connection.agent.request("session/list", {});
    expect(sessions).toHaveLength(1);
    const sessionId = sessions[0]!.sessionId;
    const loaded = await w.connection.agent.request("session/load", { sessionId, cwd: "/nowhere", mcpServers: [] });
    const replay = w.updates.map((n) => n.update.sessionUpdate);
    expect(w.text("user_message_chunk")).toBe("Run pwd");
    expect(w.text("agent_message_chunk")).toContain("The current directory is `/home/sim/project`.");
    expect(replay).toContain("tool_call");
    expect(w.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ title: "pwd", kind: "execute" });
    expect(loaded._meta).toMatchObject({ agyBridge: { usage: { inputTokens: expect.any(Number) } } });
    // The replay is history, not a prompt; afterwards the session works live.
    const before = w.updates.length;
    expect((await prompt(w, sessionId, "Say hello in one short sentence.")).stopReason).toBe("end_turn");
    expect(w.updates.slice(before).some((n) => n.update.sessionUpdate === "agent_message_chunk")).toBe(true);
  });
});
