/**
 * The hub attaches a few sessions at a time (issue 23): each attach reads its
 * conversation's history, and a refresh that finds a hundred must not hold a
 * hundred histories at once. Every session is still attached.
 */
import { describe, expect, it } from "vitest";
import { createSessionHub } from "../../src/server/session-hub.js";
import { createScriptedSession } from "./support/scripted-session.js";

describe("attaching many sessions", () => {
  it("attaches at most attachConcurrency at once, and all of them in the end", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `conv-${i}`);
    let running = 0;
    let most = 0;
    const hub = createSessionHub({
      attachConcurrency: 3,
      list: async () => ids.map((conversationId) => ({ conversationId })),
      attach: async (descriptor) => {
        running++;
        most = Math.max(most, running);
        // Several turns of the event loop, so overlapping attaches would show.
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        running--;
        return createScriptedSession(descriptor.conversationId);
      },
    });
    try {
      await hub.refresh();
      expect(most).toBe(3);
      expect(
        hub
          .list()
          .map((s) => s.conversationId)
          .sort(),
      ).toEqual([...ids].sort());
    } finally {
      await hub.close();
    }
  });
});
