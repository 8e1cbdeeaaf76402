/**
 * The per-conversation log behind read_events, wait_for and the resources,
 * and `wait_for`'s condition logic over it (timers injected).
 */
import { describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createConversationLog } from "../../src/mcp/conversation-log.js";
import { decidedByFor } from "../../src/mcp/mcp-server.js";
import { transcriptText } from "../../src/mcp/transcript-text.js";
import { waitFor, type WaitEffects } from "../../src/mcp/wait-for.js";

const C = "conv-1";
const requested = (interactionId: string, stepIndex: number): MapperEvent => ({
  type: "interaction_requested",
  conversationId: C,
  trajectoryId: "t",
  stepIndex,
  interactionId,
  stepType: "RUN_COMMAND",
  callId: `agy_call_t_${stepIndex}`,
  request: { kind: "permission", action: "command", target: "pwd", description: "Running pwd" },
});
const resolved = (interactionId: string, stepIndex: number): MapperEvent => ({
  type: "interaction_resolved",
  conversationId: C,
  trajectoryId: "t",
  stepIndex,
  interactionId,
  kind: "permission",
  outcome: "approved",
  stepStatus: "RUNNING",
  decidedBy: "mcp:x",
});
const status = (s: "running" | "waiting" | "idle" | "failed"): MapperEvent => ({
  type: "status",
  conversationId: C,
  status: s,
  reason: s === "idle" ? "turn_completed" : "turn_started",
});
const historyEnd: MapperEvent = { type: "history_end", conversationId: C };

/** Timers the test fires by hand; `now` advances with them. */
function manualEffects(signal = new AbortController().signal): WaitEffects & { advance(ms: number): void; progressCalls: number[] } {
  let now = 0;
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  const progressCalls: number[] = [];
  return {
    now: () => now,
    setTimer(ms, fn) {
      const timer = { at: now + ms, fn, live: true };
      timers.push(timer);
      return () => {
        timer.live = false;
      };
    },
    progress: (elapsed) => progressCalls.push(elapsed),
    progressIntervalMs: 1000,
    signal,
    progressCalls,
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const next = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (next === undefined) break;
        next.live = false;
        now = next.at;
        next.fn();
      }
      now = end;
    },
  };
}

describe("the conversation log", () => {
  it("numbers events from 1, pages after a cursor, and keeps pending and status in step with them", () => {
    const log = createConversationLog();
    for (const e of [status("running"), requested("int_a", 3), status("waiting")]) log.append(e);
    expect(log.after(0, 10).map((e) => e.id)).toEqual([1, 2, 3]);
    expect(log.after(1, 1).map((e) => e.event.type)).toEqual(["interaction_requested"]);
    expect(log.after(3, 10)).toEqual([]);
    expect(log.pending().map((p) => p.interactionId)).toEqual(["int_a"]);
    expect(log.status()).toBe("waiting");
    log.append(resolved("int_a", 3));
    expect(log.pending()).toEqual([]);
    expect(log.request("int_a")?.stepIndex).toBe(3);
  });

  it("does not log an open interaction twice when a re-attach replays it", () => {
    const log = createConversationLog();
    log.append(requested("int_a", 3));
    log.append(historyEnd);
    log.append(requested("int_a", 3));
    expect(log.after(0, 10).map((e) => e.event.type)).toEqual(["interaction_requested"]);
    expect(log.historyRead).toBe(true);
  });

  it("counts a history without any turn as idle, and one with a running turn as running", () => {
    const quiet = createConversationLog();
    expect(quiet.status()).toBe("unknown");
    quiet.append(historyEnd);
    expect(quiet.status()).toBe("idle");
    const busy = createConversationLog();
    busy.append(status("running"));
    busy.append(historyEnd);
    expect(busy.status()).toBe("running");
  });
});

describe("wait_for's conditions", () => {
  it("returns at once when an interaction is already pending or the turn is already idle", async () => {
    const log = createConversationLog();
    log.append(requested("int_a", 3));
    const gate = await waitFor(log, { until: "pending_interaction", timeoutMs: 60_000 }, manualEffects());
    expect(gate).toMatchObject({ outcome: "pending_interaction", cursor: 1, waitedMs: 0 });
    log.append(resolved("int_a", 3));
    log.append(status("idle"));
    expect((await waitFor(log, { until: "idle", timeoutMs: 60_000 }, manualEffects())).outcome).toBe("idle");
  });

  it("with a cursor, waits for an idle edge after it even when the last status is idle", async () => {
    const log = createConversationLog();
    log.append(status("idle"));
    const effects = manualEffects();
    const waiting = waitFor(log, { until: "idle", timeoutMs: 60_000, since: 1 }, effects);
    log.append(status("running"));
    log.append(status("idle"));
    expect(await waiting).toMatchObject({ outcome: "idle", cursor: 3, event: { type: "status", status: "idle" } });
  });

  it("waits for the next event of a type, not one already logged, and reports failure of the turn", async () => {
    const log = createConversationLog();
    log.append(status("running"));
    const next = waitFor(log, { until: "event", eventType: "status", timeoutMs: 60_000 }, manualEffects());
    log.append(requested("int_b", 4));
    log.append(status("waiting"));
    expect(await next).toMatchObject({ outcome: "event", event: { status: "waiting" } });
    const idle = waitFor(log, { until: "idle", timeoutMs: 60_000 }, manualEffects());
    log.append(status("failed"));
    expect((await idle).outcome).toBe("failed");
  });

  it("times out at its bound with progress on the way, and stops when the client cancels", async () => {
    const log = createConversationLog();
    const effects = manualEffects();
    const waiting = waitFor(log, { until: "pending_interaction", timeoutMs: 3500 }, effects);
    effects.advance(3500);
    expect(await waiting).toMatchObject({ outcome: "timed_out", waitedMs: 3500 });
    expect(effects.progressCalls).toEqual([1000, 2000, 3000]);
    const abort = new AbortController();
    const cancelled = waitFor(log, { until: "pending_interaction", timeoutMs: 60_000 }, manualEffects(abort.signal));
    abort.abort();
    expect((await cancelled).outcome).toBe("timed_out");
  });
});

describe("names and text", () => {
  it("names the deciding client safely, whatever it calls itself", () => {
    expect(decidedByFor("claude-code")).toBe("mcp:claude-code");
    expect(decidedByFor("evil\n\u001b[31mname with spaces")).toBe("mcp:evil-31mname-with-spaces");
    expect(decidedByFor(undefined)).toBe("mcp:unnamed-client");
    expect(decidedByFor("x".repeat(500))).toHaveLength(4 + 64);
  });

  it("writes the transcript as settled lines, leaving deltas out", () => {
    const text = transcriptText([
      { type: "user_message", conversationId: C, trajectoryId: "t", stepIndex: 0, text: "Run pwd" },
      { type: "message_delta", conversationId: C, trajectoryId: "t", stepIndex: 1, messageId: "m", index: 0, text: "The", replace: false, final: false },
      requested("int_a", 3),
      resolved("int_a", 3),
      status("idle"),
    ]);
    expect(text).toBe("user: Run pwd\nwaiting for permission to command pwd — int_a\nint_a approved by mcp:x\n[idle: turn_completed]\n");
  });
});

describe("what the log says a conversation waits for", () => {
  it("is the waiting edge's word, then the oldest open request's, and nothing once it runs", () => {
    const log = createConversationLog();
    expect(log.waitingFor()).toBeUndefined();
    log.append(requested("int_1", 6));
    log.append({
      type: "status",
      conversationId: C,
      trajectoryId: "t",
      stepIndex: 6,
      status: "waiting",
      reason: "interaction_pending",
      waitingFor: "permission",
    });
    expect(log.waitingFor()).toBe("permission");
    log.append({
      type: "interaction_requested",
      conversationId: C,
      trajectoryId: "t",
      stepIndex: 7,
      interactionId: "int_2",
      stepType: "ASK_QUESTION",
      callId: "agy_call_t_7",
      request: { kind: "question", questions: [{ question: "Which?", options: [{ id: "1", text: "A" }], multiSelect: false }] },
    });
    log.append(resolved("int_1", 6));
    expect(log.waitingFor()).toBe("question");
    log.append(resolved("int_2", 7));
    log.append(status("running"));
    expect(log.waitingFor()).toBeUndefined();
  });
});
