import { describe, expect, it } from "vitest";
import { isChildConversation, rotationTarget } from "../../src/session/rotation.js";
import { pageStart, StepFrontier } from "../../src/session/step-frontier.js";
import { displayNameFor, withDisplayNames } from "../../src/session/model-names.js";
import { createEventFanout } from "../../src/session/event-fanout.js";
import type { MapperEvent } from "../../src/mapper/index.js";

const root = (id: string, at?: string) => ({
  trajectoryType: "CORTEX_TRAJECTORY_TYPE_CASCADE",
  ...(at === undefined ? {} : { lastUserInputTime: at }),
  trajectoryMetadata: { rootConversationId: id },
});

describe("rotation", () => {
  it("rotates to a root sibling strictly newer than the bound conversation", () => {
    const summaries = { a: root("a", "2026-01-01T10:00:00Z"), b: root("b", "2026-01-01T10:00:05Z") };
    expect(rotationTarget("a", summaries)).toBe("b");
    expect(rotationTarget("b", summaries)).toBeUndefined();
  });

  it("never takes a sub-agent's conversation for a rotation", () => {
    const child = {
      ...root("a", "2026-01-01T11:00:00Z"),
      trajectoryMetadata: { rootConversationId: "a", parentConversationId: "a", nestingDepth: 1 },
    };
    expect(isChildConversation("c", child)).toBe(true);
    expect(rotationTarget("a", { a: root("a", "2026-01-01T10:00:00Z"), c: child })).toBeUndefined();
    const orphanRoot = { ...root("x", "2026-01-01T11:00:00Z") };
    expect(isChildConversation("d", orphanRoot)).toBe(true);
  });

  it("does not rotate on a tie, a missing bound entry, or a sibling without activity", () => {
    expect(rotationTarget("a", { a: root("a", "2026-01-01T10:00:00Z"), b: root("b", "2026-01-01T10:00:00Z") })).toBeUndefined();
    expect(rotationTarget("a", { b: root("b", "2026-01-01T10:00:00Z") })).toBeUndefined();
    expect(rotationTarget("a", { a: root("a", "2026-01-01T10:00:00Z"), b: root("b") })).toBeUndefined();
    expect(rotationTarget("a", { a: root("a"), b: root("b", "2026-01-01T10:00:00") })).toBe("b");
  });
});

const step = (index: number, status: string, type = "CORTEX_STEP_TYPE_RUN_COMMAND") => ({
  type,
  status,
  metadata: { sourceTrajectoryStepInfo: index === 0 ? {} : { stepIndex: index } },
});

describe("the frontier", () => {
  it("moves past settled steps only, so a reconcile starts at the first step that may change", () => {
    const f = new StepFrontier();
    f.observePage(
      [
        step(0, "CORTEX_STEP_STATUS_DONE"),
        step(1, "CORTEX_STEP_STATUS_DONE"),
        step(2, "CORTEX_STEP_STATUS_WAITING"),
        step(3, "CORTEX_STEP_STATUS_PENDING"),
      ] as never,
      0,
    );
    expect(f.frontier).toBe(2);
    f.observe(2, step(2, "CORTEX_STEP_STATUS_DONE"));
    expect(f.frontier).toBe(3);
    f.observe(3, step(3, "CORTEX_STEP_STATUS_DONE"));
    expect(f.frontier).toBe(4);
  });

  it("reads where a page really starts when a build ignores stepOffset", () => {
    const full = [step(0, "CORTEX_STEP_STATUS_DONE", "CORTEX_STEP_TYPE_USER_INPUT"), step(1, "CORTEX_STEP_STATUS_DONE"), step(2, "CORTEX_STEP_STATUS_DONE")];
    expect(pageStart(full, 2)).toBe(0);
    expect(pageStart(full.slice(2), 2)).toBe(2);
    expect(pageStart([], 5)).toBe(5);
  });

  it("drops a frame's step that is older than what a snapshot already showed", () => {
    const f = new StepFrontier();
    f.observe(4, step(4, "CORTEX_STEP_STATUS_WAITING"));
    const update = {
      mainTrajectoryUpdate: { stepsUpdate: { indices: [3, 4], steps: [step(3, "CORTEX_STEP_STATUS_DONE"), step(4, "CORTEX_STEP_STATUS_PENDING")] } },
    };
    expect(f.fresher(update as never).mainTrajectoryUpdate?.stepsUpdate?.indices).toEqual([3]);
    const later = { mainTrajectoryUpdate: { stepsUpdate: { indices: [4], steps: [step(4, "CORTEX_STEP_STATUS_RUNNING")] } } };
    expect(f.fresher(later as never)).toBe(later);
  });
});

describe("model names", () => {
  it("finds agy's display name for an enum, and nothing for an unknown one", () => {
    const catalog = { models: { m: { model: "MODEL_PLACEHOLDER_M26", displayName: "Opus 4.6 Thinking" } } };
    expect(displayNameFor(catalog, "MODEL_PLACEHOLDER_M26")).toBe("Opus 4.6 Thinking");
    expect(displayNameFor(catalog, "MODEL_PLACEHOLDER_M99")).toBeUndefined();
  });

  it("names the model on each model_changed the catalog knows, and leaves the rest as they came", () => {
    const catalog = { models: { m: { model: "MODEL_PLACEHOLDER_M26", displayName: "Opus 4.6 Thinking" } } };
    const base = { conversationId: "c", trajectoryId: "t", stepIndex: 1 };
    const events = withDisplayNames(catalog, [
      { type: "model_changed", ...base, model: "MODEL_PLACEHOLDER_M26" } as never,
      { type: "model_changed", ...base, model: "MODEL_PLACEHOLDER_M99" } as never,
      { type: "status", conversationId: "c", status: "idle" } as never,
    ]);
    expect(events).toEqual([
      { type: "model_changed", ...base, model: "MODEL_PLACEHOLDER_M26", displayName: "Opus 4.6 Thinking" },
      { type: "model_changed", ...base, model: "MODEL_PLACEHOLDER_M99" },
      { type: "status", conversationId: "c", status: "idle" },
    ]);
  });
});

describe("the fanout", () => {
  const ev = (n: number): MapperEvent => ({ type: "diagnostic", conversationId: "c", code: "invalid_step", message: String(n) });

  it("lets a fast consumer read everything while a slow one is resynchronised", async () => {
    const fanout = createEventFanout({ capacity: 4, resync: () => [ev(-1)], lost: (n) => ev(-1000 - n) });
    const fast = fanout.subscribe(undefined, false)[Symbol.asyncIterator]();
    const slow = fanout.subscribe(undefined, false)[Symbol.asyncIterator]();
    const got: string[] = [];
    for (let i = 0; i < 10; i++) {
      fanout.publish([ev(i)]);
      got.push(((await fast.next()).value as { message: string }).message);
    }
    expect(got).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    const slowGot: string[] = [];
    for (let i = 0; i < 2; i++) slowGot.push(((await slow.next()).value as { message: string }).message);
    expect(slowGot[0]).toMatch(/^-100\d$/);
    expect(slowGot[1]).toBe("-1");
    fanout.close();
    expect((await fast.next()).done).toBe(true);
  });
});
