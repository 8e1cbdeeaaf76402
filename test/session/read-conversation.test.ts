/**
 * `readConversation()`: the conversation read afresh from agy through a new
 * tracker — what serve's SSE resync rebuilds a client from, since neither
 * the session nor the tracker keeps a history (issue 23). Against the
 * simulator over loopback.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld, type World } from "./support/session-world.js";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("readConversation", () => {
  it("gives the settled conversation as the live reading committed it, without deltas, and the gate as resolved", async () => {
    world = await startWorld();
    const w = world;
    w.sim.engine.conversation(w.sim.engine.activeConversationId)!.submit("Run pwd");
    const gate = await w.waitFor(isRequested, "the permission request");
    await w.session.approve(gate.interactionId);
    await w.waitFor((e) => isTurnEnd(e) && w.log.indexOf(e) > w.log.indexOf(gate), "the end of the turn");
    const read = await w.session.readConversation();
    const kinds = read.map((e) => e.type);
    expect(kinds).not.toContain("message_delta");
    expect(kinds.filter((k) => k === "interaction_requested" || k === "interaction_resolved")).toEqual(["interaction_requested", "interaction_resolved"]);
    // Every committed item of the live log, in the same order.
    const committed = (events: typeof read) =>
      events
        .filter((e) => e.type === "user_message" || e.type === "message" || e.type === "function_call" || e.type === "function_call_output")
        .map((e) => JSON.stringify(e));
    expect(committed(read)).toEqual(committed(w.log));
    expect(committed(read).length).toBeGreaterThanOrEqual(4);
  });
});
