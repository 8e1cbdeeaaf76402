import { describe, expect, it } from "vitest";
import { createSessionHub, type SupervisedSession } from "../../src/server/session-hub.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { until } from "../support/until.js";
import { createScriptedSession } from "./support/scripted-session.js";

const gate = (interactionId: string, stepIndex: number, request: Extract<MapperEvent, { type: "interaction_requested" }>["request"]): MapperEvent => ({
  type: "interaction_requested",
  conversationId: "conv-w",
  trajectoryId: "t",
  stepIndex,
  interactionId,
  stepType: "RUN_COMMAND",
  callId: `agy_call_t_${stepIndex}`,
  request,
});
const answered = (interactionId: string, stepIndex: number): MapperEvent => ({
  type: "interaction_resolved",
  conversationId: "conv-w",
  trajectoryId: "t",
  stepIndex,
  interactionId,
  kind: "permission",
  outcome: "approved",
  stepStatus: "RUNNING",
});

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

  it("lists what a waiting session waits for: the oldest open request's word, none once it runs again", async () => {
    const session = createScriptedSession("conv-w");
    const hub = createSessionHub({ list: async () => [{ conversationId: "conv-w" }], attach: async () => session });
    try {
      await hub.refresh();
      const entry = hub.get("conv-w")!;
      const summary = () => entry.summary();
      session.push(gate("int_a", 4, { kind: "permission", variant: "filePermission", action: "file", target: "file:///w/a.txt", description: "" }));
      session.push({
        type: "status",
        conversationId: "conv-w",
        trajectoryId: "t",
        stepIndex: 4,
        status: "waiting",
        reason: "interaction_pending",
        waitingFor: "file",
      });
      await until(() => summary().status === "waiting", "the waiting edge", { seen: () => JSON.stringify(summary()) });
      expect(summary()).toMatchObject({ status: "waiting", pending: 1, waitingFor: "file" });
      // A second gate opens (no new edge), then the first is answered: the question is what it waits for now.
      session.push(gate("int_b", 5, { kind: "question", questions: [{ question: "Which?", options: [{ id: "1", text: "A" }], multiSelect: false }] }));
      session.push(answered("int_a", 4));
      await until(() => summary().pending === 1 && summary().waitingFor === "question", "the question to be what it waits for", {
        seen: () => JSON.stringify(summary()),
      });
      session.push(answered("int_b", 5));
      session.push({ type: "status", conversationId: "conv-w", trajectoryId: "t", stepIndex: 5, status: "running", reason: "interaction_resolved" });
      await until(() => summary().status === "running", "the running edge", { seen: () => JSON.stringify(summary()) });
      expect(Object.hasOwn(summary(), "waitingFor")).toBe(false);
    } finally {
      await hub.close();
    }
  });
});
