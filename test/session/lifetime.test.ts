import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { AgySession } from "../../src/session/index.js";
import { startSimServer } from "../../src/sim/index.js";

describe("a session's lifetime", () => {
  it("lets go of the caller's abort signal when it closes, so one signal can serve many sessions", async () => {
    const sim = await startSimServer({ speed: 0 });
    try {
      const lifetime = new AbortController();
      const before = getEventListeners(lifetime.signal, "abort").length;
      const sessions = await Promise.all(
        Array.from({ length: 3 }, () => AgySession.attach({ url: sim.plainUrl, conversationId: sim.engine.activeConversationId, signal: lifetime.signal })),
      );
      expect(getEventListeners(lifetime.signal, "abort").length).toBeGreaterThan(before);
      await Promise.all(sessions.map((s) => s.close()));
      expect(getEventListeners(lifetime.signal, "abort").length).toBe(before);
    } finally {
      await sim.close();
    }
  });
});
