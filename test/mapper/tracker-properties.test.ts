/**
 * Property: however agy's history reaches the tracker — stream frames,
 * duplicated frames, re-sent settled steps, lost frames recovered by a
 * reconnect and a paged snapshot — the events equal those of applying the
 * final history once, in order.
 *
 * "Equal" is defined on the committed events: everything except deltas,
 * interaction events, the waiting/running edges around interactions and
 * rewrite diagnostics, which legitimately depend on which intermediate
 * states were seen. For those, the checks are: deltas of a message have
 * indices 0..n-1, exactly the last is final, and rendering them (append, or
 * replace when `replace`) gives the committed text; every requested
 * interaction is resolved exactly once, after it was requested.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTrajectoryTracker, type MapperEvent } from "../../src/mapper/index.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";

const CID = "prop-conversation";
const TID = "prop-trajectory";
const info = (stepIndex?: number) => ({ trajectoryId: TID, cascadeId: CID, ...(stepIndex ? { stepIndex } : {}) });

interface ToolSpec {
  waiting: boolean;
  timeout: boolean;
  error: boolean;
}
interface TurnSpec {
  tools: ToolSpec[];
  chunks: number;
  thinking: boolean;
  rewrite: boolean;
  error: boolean;
  model: string;
}
/** One tick of agy time: the step at `index` changes to `step`. */
interface Tick {
  index: number;
  step: Record<string, unknown>;
}

const toolSpec = fc.record({ waiting: fc.boolean(), timeout: fc.boolean(), error: fc.boolean() });
const turnSpec = fc.record({
  tools: fc.array(toolSpec, { maxLength: 2 }),
  chunks: fc.integer({ min: 1, max: 4 }),
  thinking: fc.boolean(),
  rewrite: fc.boolean(),
  error: fc.boolean(),
  model: fc.constantFrom("MODEL_A", "MODEL_B"),
});

function history(turns: TurnSpec[]): Tick[] {
  const ticks: Tick[] = [];
  let index = 0;
  turns.forEach((turn, t) => {
    const text = `Turn ${t} answer`;
    ticks.push({
      index: index++,
      step: {
        type: "CORTEX_STEP_TYPE_USER_INPUT",
        status: "CORTEX_STEP_STATUS_DONE",
        metadata: { executionId: `exec-${t}`, sourceTrajectoryStepInfo: info() },
        userInput: { userResponse: `question ${t}`, userConfig: { plannerConfig: { planModel: turn.model } } },
      },
    });
    for (const tool of turn.tools) {
      ticks.push({
        index: index++,
        step: {
          type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
          status: "CORTEX_STEP_STATUS_DONE",
          metadata: { sourceTrajectoryStepInfo: info(index - 1), modelUsage: { inputTokens: "10", outputTokens: "2" } },
          plannerResponse: { toolCalls: [{ id: "c", name: "run_command" }] },
        },
      });
      const attempts = tool.waiting && tool.timeout ? 2 : 1;
      for (let a = 0; a < attempts; a++) {
        const at = index++;
        const base = (status: string, extra: Record<string, unknown> = {}) => ({
          index: at,
          step: {
            type: "CORTEX_STEP_TYPE_RUN_COMMAND",
            status: `CORTEX_STEP_STATUS_${status}`,
            metadata: { toolAction: "Running it", sourceTrajectoryStepInfo: info(at), argumentsOrder: ["CommandLine"] },
            runCommand: { commandLine: `cmd ${at}` },
            ...extra,
          },
        });
        const perm = { requestedInteraction: { permission: { resource: { action: "command", target: `cmd ${at}` } } } };
        ticks.push(base("PENDING"));
        if (tool.waiting) ticks.push(base("WAITING", perm));
        if (tool.waiting && tool.timeout && a === 0) {
          ticks.push(base("ERROR", perm));
          continue;
        }
        ticks.push(base("RUNNING"));
        ticks.push(tool.error ? base("ERROR") : base("DONE", { runCommand: { commandLine: `cmd ${at}`, combinedOutput: { full: `out ${at}\n` } } }));
      }
    }
    const at = index++;
    const planner = (status: string, body: Record<string, unknown>, extraMeta: Record<string, unknown> = {}) => ({
      index: at,
      step: {
        type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
        status: `CORTEX_STEP_STATUS_${status}`,
        metadata: { sourceTrajectoryStepInfo: info(at), ...extraMeta },
        plannerResponse: body,
      },
    });
    const thinking = turn.thinking ? "Thinking it through." : undefined;
    for (let c = 1; c <= turn.chunks; c++) {
      const partial = text.slice(0, Math.ceil((text.length * c) / (turn.chunks + 1)));
      const shown = turn.rewrite && c === turn.chunks ? `Draft ${partial}` : partial;
      ticks.push(planner("GENERATING", { modifiedResponse: shown, ...(thinking ? { thinking: thinking.slice(0, 8 * c) } : {}) }));
    }
    ticks.push(
      turn.error
        ? planner("ERROR", {})
        : planner("DONE", { modifiedResponse: text, ...(thinking ? { thinking } : {}) }, { modelUsage: { inputTokens: "100", outputTokens: "7" } }),
    );
  });
  return ticks;
}

/** The trajectory after the first `n` ticks. */
function stateAt(ticks: Tick[], n: number): Record<string, unknown>[] {
  const steps: Record<string, unknown>[] = [];
  for (const tick of ticks.slice(0, n)) steps[tick.index] = tick.step;
  return steps;
}

const frame = (indices: number[], steps: unknown[]): StreamUpdate =>
  ({ conversationId: CID, trajectoryId: TID, mainTrajectoryUpdate: { stepsUpdate: { indices, steps } } }) as StreamUpdate;

type Op = "frame" | "dup" | "resend" | "lost" | "snapshot";

function deliver(ticks: Tick[], ops: Op[], pageSize: number, resendPick: number): MapperEvent[] {
  const tracker = createTrajectoryTracker({ conversationId: CID });
  const out: MapperEvent[] = [];
  const snapshot = (n: number) => {
    out.push(...tracker.markReconnected());
    const steps = stateAt(ticks, n);
    for (let offset = 0; offset < steps.length; offset += pageSize) {
      out.push(...tracker.applySnapshot({ steps: steps.slice(offset, offset + pageSize), stepOffset: offset }));
    }
  };
  let lost = false;
  ticks.forEach((tick, t) => {
    let op = ops[t] ?? "frame";
    if (lost && op !== "lost") op = "snapshot";
    if (op === "lost") {
      lost = true;
      return;
    }
    if (op === "snapshot") {
      lost = false;
      snapshot(t + 1);
      return;
    }
    out.push(...tracker.applyStreamUpdate(frame([tick.index], [tick.step])));
    if (op === "dup") out.push(...tracker.applyStreamUpdate(frame([tick.index], [tick.step])));
    if (op === "resend") {
      const steps = stateAt(ticks, t + 1);
      const i = resendPick % steps.length;
      out.push(...tracker.applyStreamUpdate(frame([i], [steps[i]])));
    }
  });
  snapshot(ticks.length);
  return out;
}

const INTERACTION_REASONS = new Set(["interaction_pending", "interaction_resolved"]);
function committed(events: MapperEvent[]): MapperEvent[] {
  return events.filter((e) => {
    if (e.type === "message_delta" || e.type === "reasoning_delta") return false;
    if (e.type === "interaction_requested" || e.type === "interaction_resolved") return false;
    if (e.type === "status" && INTERACTION_REASONS.has(e.reason)) return false;
    if (e.type === "diagnostic" && e.code === "non_prefix_rewrite") return false;
    return true;
  });
}

function checkDeltas(events: MapperEvent[]): void {
  const byMessage = new Map<string, { text: string; replace: boolean; index: number; final: boolean }[]>();
  for (const e of events) {
    if (e.type === "message_delta") byMessage.set(e.messageId, [...(byMessage.get(e.messageId) ?? []), e]);
  }
  for (const [messageId, deltas] of byMessage) {
    expect(deltas.map((d) => d.index)).toEqual(deltas.map((_, i) => i));
    expect(deltas.map((d) => d.final)).toEqual(deltas.map((_, i) => i === deltas.length - 1));
    const message = events.find((e) => e.type === "message" && e.messageId === messageId);
    const rendered = deltas.reduce((acc, d) => (d.replace ? d.text : acc + d.text), "");
    if (message?.type === "message" && !message.failed) expect(rendered).toBe(message.text);
  }
}

/** Rendered reasoning of a committed planner equals its final `thinking` (this history never rewrites reasoning). */
function checkReasoning(events: MapperEvent[], finalThinking: Map<string, string>): void {
  const rendered = new Map<string, string>();
  for (const e of events) {
    if (e.type !== "reasoning_delta") continue;
    expect(e.started).toBe(!rendered.has(e.messageId));
    rendered.set(e.messageId, e.replace ? e.text : (rendered.get(e.messageId) ?? "") + e.text);
  }
  for (const e of events) {
    if (e.type === "message" && !e.failed && rendered.has(e.messageId)) {
      expect(rendered.get(e.messageId)).toBe(finalThinking.get(e.messageId));
    }
  }
}

function finalThinkingOf(ticks: Tick[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { index, step } of ticks) {
    const thinking = (step["plannerResponse"] as { thinking?: string } | undefined)?.thinking;
    if (thinking !== undefined) out.set(`agy_msg_${TID}_${index}`, thinking);
  }
  return out;
}

function checkInteractions(events: MapperEvent[]): void {
  events.forEach((e, i) => {
    if (e.type !== "interaction_requested") return;
    const later = events.slice(i + 1).filter((r) => r.type === "interaction_resolved" && r.interactionId === e.interactionId);
    expect(later).toHaveLength(1);
    expect(events.slice(0, i).some((r) => r.type === "interaction_requested" && r.interactionId === e.interactionId)).toBe(false);
  });
}

describe("delivery-order independence", () => {
  it("gives the committed events of applying the final history once, whatever the interleaving", () => {
    const scenario = fc.array(turnSpec, { minLength: 1, maxLength: 3 }).chain((turns) => {
      const ticks = history(turns);
      return fc.record({
        ticks: fc.constant(ticks),
        ops: fc.array(fc.constantFrom<Op>("frame", "frame", "frame", "dup", "resend", "lost", "snapshot"), {
          minLength: ticks.length,
          maxLength: ticks.length,
        }),
        pageSize: fc.integer({ min: 1, max: 6 }),
        resendPick: fc.nat(),
      });
    });
    fc.assert(
      fc.property(scenario, ({ ticks, ops, pageSize, resendPick }) => {
        const once = createTrajectoryTracker({ conversationId: CID }).applySnapshot({ steps: stateAt(ticks, ticks.length) });
        const events = deliver(ticks, ops, pageSize, resendPick);
        expect(committed(events)).toEqual(committed(once));
        checkDeltas(events);
        checkReasoning(events, finalThinkingOf(ticks));
        checkInteractions(events);
      }),
      { numRuns: 300 },
    );
  });

  it("streams every delta of a fully streamed history and resolves every interaction it saw", () => {
    fc.assert(
      fc.property(fc.array(turnSpec, { minLength: 1, maxLength: 3 }), (turns) => {
        const ticks = history(turns);
        const events = deliver(
          ticks,
          ticks.map(() => "frame"),
          100,
          0,
        );
        const waits = turns.flatMap((t) => t.tools).reduce((n, tool) => n + (tool.waiting ? (tool.timeout ? 2 : 1) : 0), 0);
        expect(events.filter((e) => e.type === "interaction_requested")).toHaveLength(waits);
        const finals = events.filter((e) => e.type === "message_delta" && e.final);
        expect(finals).toHaveLength(turns.length);
      }),
      { numRuns: 150 },
    );
  });
});
