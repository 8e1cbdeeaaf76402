/**
 * agy's gates and questions reach the editor as `session/request_permission`
 * (the simulator as agy in tmux, the SDK's client on a real stdio pipe), and
 * the editor's choice goes through the session's answer path.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startAcpWorld, type AcpWorld } from "./support/acp-world.js";
import { join, prompt } from "./support/join.js";

let world: AcpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function toolUpdates(w: AcpWorld, toolCallId: string) {
  return w.updates
    .map((n) => n.update)
    .filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === toolCallId);
}

describe("gates over ACP", { timeout: 120_000 }, () => {
  it("asks before a command runs; allow runs it, the output reaches the editor and the audit log names the editor", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    w.answerPermissions(() => ({ outcome: { outcome: "selected", optionId: "allow" } }));
    const response = await prompt(w, sessionId, "Run pwd");
    expect(response.stopReason, w.stderr()).toBe("end_turn");
    expect(w.permissionRequests).toHaveLength(1);
    const asked = w.permissionRequests[0]!;
    expect(asked.toolCall.title).toBe("pwd");
    expect(asked.options.map((o) => [o.optionId, o.kind])).toEqual([
      ["allow", "allow_once"],
      ["allow_conversation", "allow_always"],
      ["deny", "reject_once"],
    ]);
    const updates = toolUpdates(w, asked.toolCall.toolCallId);
    expect(updates[0]).toMatchObject({ sessionUpdate: "tool_call", status: "pending", kind: "execute", title: "pwd" });
    expect(updates.at(-1)).toMatchObject({
      sessionUpdate: "tool_call_update",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "/home/sim/project\n" } }],
    });
    expect(w.text("agent_message_chunk")).toContain("/home/sim/project");
    await expect
      .poll(async () => (await w.auditLog()).find((r) => r["decidedBy"] === "acp:acp-test"), { timeout: 10_000 })
      .toMatchObject({ decision: "approve", delivery: "delivered" });
  });

  it("deny declines the command: it never runs and the turn still ends", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    w.answerPermissions(() => ({ outcome: { outcome: "selected", optionId: "deny" } }));
    const response = await prompt(w, sessionId, "Delete the build directory");
    expect(response.stopReason, w.stderr()).toBe("end_turn");
    const asked = w.permissionRequests[0]!;
    const last = toolUpdates(w, asked.toolCall.toolCallId).at(-1);
    expect(last).toMatchObject({ status: "failed", rawOutput: { declined: true } });
    await w.tmux.waitForScreen("agy", (s) => s.includes("User declined the tool call"), "the declined call in agy's transcript");
  });

  it("asks a multi-select question one pick at a time and sends every pick", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    const picks = ["pick:1", "pick:3", "done"];
    w.answerPermissions((request) => {
      const optionId = picks.shift()!;
      expect(request.options.some((o) => o.optionId === optionId)).toBe(true);
      return { outcome: { outcome: "selected", optionId } };
    });
    const response = await prompt(w, sessionId, "Which features should I add?");
    expect(response.stopReason, w.stderr()).toBe("end_turn");
    expect(w.permissionRequests.map((r) => r.options.map((o) => o.optionId))).toEqual([
      ["pick:1", "pick:2", "pick:3", "pick:4", "dismiss"],
      ["pick:2", "pick:3", "pick:4", "done", "dismiss"],
      ["pick:2", "pick:4", "done", "dismiss"],
    ]);
    expect(w.permissionRequests[2]!.toolCall.title).toBe("Which features do you want? (selected: Dark mode, Export to CSV)");
    expect(w.text("agent_message_chunk")).toContain("Adding: Dark mode, Export to CSV.");
  });

  it("asks a question as a form when the client takes form elicitations, a multi-select as a list", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w, "/nowhere", { elicitation: { form: {} } });
    w.answerElicitations(() => ({ action: "accept", content: { choice: ["4", "2"] } }));
    const response = await prompt(w, sessionId, "Which features should I add?");
    expect(response.stopReason, w.stderr()).toBe("end_turn");
    expect(w.permissionRequests).toEqual([]);
    expect(w.elicitations).toHaveLength(1);
    expect(w.elicitations[0]).toMatchObject({
      mode: "form",
      sessionId,
      message: "Which features do you want?",
      requestedSchema: {
        properties: {
          choice: {
            type: "array",
            items: {
              anyOf: [
                { const: "1", title: "Dark mode" },
                { const: "2", title: "Offline support" },
                { const: "3", title: "Export to CSV" },
                { const: "4", title: "Keyboard shortcuts" },
              ],
            },
          },
        },
      },
    });
    expect(w.text("agent_message_chunk")).toContain("Adding: Offline support, Keyboard shortcuts.");
  });

  it("withdraws the permission request when the person answers in agy's TUI first", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    // The editor never answers: it waits until the request is withdrawn.
    w.answerPermissions(
      (_request, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true })),
    );
    const running = prompt(w, sessionId, "Run pwd");
    await w.until(() => w.permissionRequests.length === 1, "the permission request");
    await w.tmux.waitForScreen("agy", (s) => s.includes("Do you want to proceed?"), "agy's own permission dialog");
    await w.tmux.sendKeys("agy", "Enter");
    expect((await running).stopReason, w.stderr()).toBe("end_turn");
    expect(w.withdrawn).toEqual([w.permissionRequests[0]!.toolCall.toolCallId]);
    expect(toolUpdates(w, w.permissionRequests[0]!.toolCall.toolCallId).at(-1)).toMatchObject({ status: "completed" });
  });
});
