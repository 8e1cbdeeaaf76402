/**
 * When a person is told: open interactions once, after history; never for
 * history that is over; only what the policy's verdict left to a person when a policy runs;
 * resolutions only for what was told; and the escalation.
 */
import { describe, expect, it } from "vitest";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import {
  createNotifyDispatcher,
  formatDuration,
  parseDuration,
  type AnswerInteraction,
  type InteractionAction,
  type Notifier,
  type PendingNotice,
  type ResolvedNotice,
} from "../../src/notify/index.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

function requested(stepIndex: number, kind: "permission" | "question" = "permission"): Requested {
  return {
    type: "interaction_requested",
    conversationId: "conv-1",
    trajectoryId: "traj-1",
    stepIndex,
    interactionId: `int_${stepIndex}`,
    stepType: kind === "permission" ? "RUN_COMMAND" : "ASK_QUESTION",
    callId: `call_${stepIndex}`,
    request:
      kind === "permission"
        ? { kind: "permission", action: "command", target: `cmd ${stepIndex}`, description: "" }
        : { kind: "question", questions: [{ question: "Which?", multiSelect: false, options: [{ id: "1", text: "A" }] }] },
  } as Requested;
}

function resolved(stepIndex: number, outcome: "approved" | "denied" = "approved", decidedBy?: string): MapperEvent {
  return {
    type: "interaction_resolved",
    conversationId: "conv-1",
    trajectoryId: "traj-1",
    stepIndex,
    interactionId: `int_${stepIndex}`,
    kind: "permission",
    outcome,
    stepStatus: "DONE",
    ...(decidedBy === undefined ? {} : { decidedBy }),
  } as MapperEvent;
}

const historyEnd = { type: "history_end", conversationId: "conv-1" } as MapperEvent;

function recorder() {
  const told: Array<["pending", PendingNotice] | ["resolved", ResolvedNotice]> = [];
  const notifier = {
    name: "recorder",
    pending: (n: PendingNotice) => void told.push(["pending", n]),
    resolved: (n: ResolvedNotice) => void told.push(["resolved", n]),
    close: async () => undefined,
  } satisfies Notifier;
  return { told, notifier };
}

function manualTimers() {
  const timers = new Set<{ fn: () => void; ms: number }>();
  return {
    setTimer: (fn: () => void, ms: number) => {
      const t = { fn, ms };
      timers.add(t);
      return t;
    },
    clearTimer: (handle: unknown) => void timers.delete(handle as { fn: () => void; ms: number }),
    pending: () => [...timers].map((t) => t.ms),
    async fireAll() {
      const due = [...timers];
      timers.clear();
      for (const t of due) t.fn();
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe("the notify dispatcher", () => {
  it("tells of what is still open when history ends, not of history that is over, and then of each new request", () => {
    const { told, notifier } = recorder();
    const d = createNotifyDispatcher({ notifiers: [notifier], pageUrl: "http://127.0.0.1:7878/", host: "devbox", policy: false });
    const s = d.session("conv-1");
    for (const e of [requested(1), resolved(1), requested(2)]) s.observe(e);
    expect(told).toEqual([]);
    s.observe(historyEnd);
    s.observe(requested(3));
    expect(told.map(([kind, n]) => `${kind} ${n.interactionId}`)).toEqual(["pending int_2", "pending int_3"]);
    expect(told[0]![1]).toMatchObject({ url: "http://127.0.0.1:7878/#/interactions/int_2", host: "devbox", escalated: false, request: { target: "cmd 2" } });
  });

  it("tells of a resolution once, only for what it told was pending, with who answered", () => {
    const { told, notifier } = recorder();
    const d = createNotifyDispatcher({ notifiers: [notifier], pageUrl: "http://x", host: "h", policy: false });
    const s = d.session("conv-1");
    s.observe(historyEnd);
    s.observe(requested(5));
    s.observe(resolved(5, "denied", "telegram:ana"));
    s.observe(resolved(5, "denied", "telegram:ana"));
    s.observe(resolved(6));
    expect(told.map(([kind, n]) => `${kind} ${n.interactionId}`)).toEqual(["pending int_5", "resolved int_5"]);
    expect(told[1]![1]).toMatchObject({ outcome: "denied", decidedBy: "telegram:ana" });
  });

  it("does not tell again when a re-attached session replays a request it already told of", () => {
    const { told, notifier } = recorder();
    const d = createNotifyDispatcher({ notifiers: [notifier], pageUrl: "http://x", host: "h", policy: false });
    const first = d.session("conv-1");
    first.observe(historyEnd);
    first.observe(requested(7));
    const again = d.session("conv-1");
    again.observe(requested(7));
    again.observe(historyEnd);
    expect(told).toHaveLength(1);
  });

  it("with a policy, tells only of what the policy left to a person: the ask written on the request, from the history on", () => {
    const { told, notifier } = recorder();
    const d = createNotifyDispatcher({ notifiers: [notifier], pageUrl: "http://x", host: "h", policy: true });
    const s = d.session("conv-1");
    const verdict = (event: Requested, decision: "approve" | "deny" | "ask"): Requested => ({
      ...event,
      policy: { decision, rule: decision === "ask" ? null : "r" },
    });
    // Open when serve attached: the ask is told at history_end, the approve never.
    s.observe(verdict(requested(1), "ask"));
    s.observe(verdict(requested(2), "approve"));
    s.observe(historyEnd);
    s.observe(verdict(requested(3), "ask"));
    s.observe(verdict(requested(4), "deny"));
    // A delivery that failed leaves the verdict standing (docs/policy.md): still nobody is told.
    s.observe(
      MapperEventSchema.parse({
        type: "policy_delivered",
        conversationId: "conv-1",
        trajectoryId: "traj-1",
        stepIndex: 4,
        interactionId: "int_4",
        decision: "deny",
        rule: "r",
        decidedBy: "policy:r",
        result: "failed",
        reason: "agy refused",
      }),
    );
    // Under a policy a request carries its verdict; one without is not a person's.
    s.observe(requested(5));
    expect(told.map(([kind, n]) => `${kind} ${n.interactionId}`)).toEqual(["pending int_1", "pending int_3"]);
  });

  it("reminds after the escalation delay, announced in the first notice, and stops when it is resolved", async () => {
    const { told, notifier } = recorder();
    const timers = manualTimers();
    const d = createNotifyDispatcher({
      notifiers: [notifier],
      pageUrl: "http://x",
      host: "h",
      policy: false,
      escalation: { afterMs: 300_000, action: "notify", maxReminders: 2 },
      ...timers,
    });
    const s = d.session("conv-1");
    s.observe(historyEnd);
    s.observe(requested(1));
    expect(told[0]![1]).toMatchObject({ escalated: false, escalation: "If nobody answers within 5m, you will be reminded." });
    expect(timers.pending()).toEqual([300_000]);
    await timers.fireAll();
    await timers.fireAll();
    await timers.fireAll();
    expect(told.map(([, n]) => (n as PendingNotice).escalated)).toEqual([false, true, true]);
    s.observe(requested(2));
    s.observe(resolved(2));
    expect(timers.pending()).toEqual([]);
  });

  it("denies a permission nobody answered, with the instruction, through serve", async () => {
    const { told, notifier } = recorder();
    const timers = manualTimers();
    const answers: Array<[string, InteractionAction, string]> = [];
    const answer: AnswerInteraction = async (_c, interactionId, action, decidedBy) => {
      answers.push([interactionId, action, decidedBy]);
      return { result: "delivered" };
    };
    const d = createNotifyDispatcher({
      notifiers: [notifier],
      pageUrl: "http://x",
      host: "h",
      policy: false,
      answer,
      escalation: { afterMs: 90_000, action: "deny", instruction: "nobody was around" },
      ...timers,
    });
    const s = d.session("conv-1");
    s.observe(historyEnd);
    s.observe(requested(1));
    s.observe(requested(2, "question"));
    expect(told[0]![1]).toMatchObject({ escalation: 'If nobody answers within 1m30s, agy-bridge denies it ("nobody was around").' });
    // A question cannot be denied: it is reminded of instead.
    expect(told[1]![1]).toMatchObject({ escalation: "If nobody answers within 1m30s, you will be reminded." });
    await timers.fireAll();
    expect(answers).toEqual([["int_1", { action: "deny", instruction: "nobody was around" }, "escalation"]]);
    expect(told.filter(([, n]) => (n as PendingNotice).escalated).map(([, n]) => n.interactionId)).toEqual(["int_2"]);
  });

  it("reads and writes durations as the flags take them", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("5m")).toBe(300_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("1500")).toBe(1500);
    expect(parseDuration("5 minutes")).toBeUndefined();
    expect(parseDuration("")).toBeUndefined();
    expect(formatDuration(5_400_000)).toBe("1h30m");
  });
});
