/**
 * Every door that builds "pending" honours the policy's verdict on the
 * event (issue 34, item 3): a request whose `interaction_requested` says the
 * policy approved or denied it is never pending — not in serve's hub (what
 * `/pending`, the session counts and the page read), not in the MCP log
 * (the pending resource, `wait_for`), not in a notification — while one the
 * policy asked about is, and the MCP log never logs a re-attach's replay
 * of a policy-decided request twice.
 */
import { describe, expect, it } from "vitest";
import type { EventOf, MapperEvent } from "../../src/mapper/index.js";
import { createConversationLog } from "../../src/mcp/conversation-log.js";
import { createNotifyDispatcher, type Notifier, type PendingNotice } from "../../src/notify/index.js";
import { createSessionHub } from "../../src/server/session-hub.js";
import { until } from "../support/until.js";
import { createScriptedSession } from "./support/scripted-session.js";

const C = "conv-verdicts";

function requested(stepIndex: number, target: string, decision?: "approve" | "deny" | "ask"): EventOf<"interaction_requested"> {
  return {
    type: "interaction_requested",
    conversationId: C,
    trajectoryId: "t",
    stepIndex,
    interactionId: `int_${stepIndex}`,
    stepType: "RUN_COMMAND",
    callId: `call_${stepIndex}`,
    request: { kind: "permission", action: "command", target, description: "" },
    ...(decision === undefined ? {} : { policy: { decision, rule: `rule-${decision}` } }),
  };
}

const events: MapperEvent[] = [
  { type: "history_end", conversationId: C },
  requested(1, "pwd", "approve"),
  requested(2, "rm -rf build", "deny"),
  requested(3, "cat ~/.bashrc", "ask"),
  requested(4, "ls"),
];

describe("the policy's verdict at every door", () => {
  it("serve's hub lists only what the policy left to a person", async () => {
    const session = createScriptedSession(C);
    const hub = createSessionHub({ list: async () => [{ conversationId: C }], attach: async () => session });
    try {
      await hub.refresh();
      for (const event of events) session.push(event);
      const entry = hub.get(C)!;
      await until(() => (entry.log.lastId >= 5 ? true : undefined), "the hub to read the five events", { ms: 5_000, everyMs: 10 });
      expect(entry.pending().map((p) => p.interactionId)).toEqual(["int_3", "int_4"]);
      expect(entry.summary().pending).toBe(2);
    } finally {
      await hub.close();
    }
  });

  it("the MCP log keeps a policy-decided request out of pending, and logs it once across a re-attach", () => {
    const log = createConversationLog();
    for (const event of events) log.append(event);
    expect(log.pending().map((p) => p.interactionId)).toEqual(["int_3", "int_4"]);
    const before = log.lastId;
    // A re-attach replays what is open.
    for (const event of events.slice(1)) log.append(event);
    expect(log.lastId).toBe(before);
    expect(log.request("int_1")?.policy).toEqual({ decision: "approve", rule: "rule-approve" });
  });

  it("notifications skip a request the policy decided", () => {
    const told: PendingNotice[] = [];
    const notifier: Notifier = { name: "test", pending: (n) => void told.push(n), resolved: () => undefined, close: async () => undefined };
    const dispatcher = createNotifyDispatcher({ notifiers: [notifier], pageUrl: "http://127.0.0.1:1/", host: "h", policy: false });
    const observer = dispatcher.session(C);
    for (const event of events) observer.observe(event);
    expect(told.map((n) => n.interactionId)).toEqual(["int_3", "int_4"]);
    void dispatcher.close();
  });
});
