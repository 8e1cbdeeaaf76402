import { describe, expect, it } from "vitest";
import { createSessionHub, type SupervisedSession } from "../../src/server/session-hub.js";
import { createScriptedSession } from "./support/scripted-session.js";

describe("the session hub", () => {
  it("attaches and drops a dozen sessions in turn without piling listeners on a long-lived signal", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      let current: string | undefined;
      const sessions: SupervisedSession[] = [];
      const hub = createSessionHub({
        list: async () => (current === undefined ? [] : [{ conversationId: current }]),
        attach: async (descriptor) => {
          const session = createScriptedSession(descriptor.conversationId);
          sessions.push(session);
          return session;
        },
      });
      for (let i = 0; i < 12; i++) {
        current = `conv-${i}`;
        await hub.refresh();
        expect(hub.list().map((s) => s.conversationId)).toEqual([current]);
      }
      current = undefined;
      await hub.refresh();
      expect(hub.list()).toEqual([]);
      // Refreshes too: each must leave nothing behind on the hub's lifetime.
      for (let i = 0; i < 12; i++) await hub.refresh();
      await hub.close();
      // process.emitWarning delivers on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(sessions).toHaveLength(12);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("aborts every session's event pump when it closes", async () => {
    const session = createScriptedSession("conv-a");
    const hub = createSessionHub({ list: async () => [{ conversationId: "conv-a" }], attach: async () => session });
    await hub.refresh();
    await hub.close();
    expect(session.closed).toBe(true);
    expect(hub.list()).toEqual([]);
  });
});
