import { describe, expect, it } from "vitest";
import { rotationTarget } from "../../src/session/rotation.js";

const IDLE = "CASCADE_RUN_STATUS_IDLE";
const RUNNING = "CASCADE_RUN_STATUS_RUNNING";

/** A root summary as agy 1.0.10 sends it (spike-notes §3.11); times are optional. */
const root = (id: string, o: { created?: string; input?: string; status?: string } = {}) => ({
  trajectoryType: "CORTEX_TRAJECTORY_TYPE_CASCADE",
  status: o.status ?? IDLE,
  ...(o.created === undefined ? {} : { createdTime: o.created }),
  ...(o.input === undefined ? {} : { lastUserInputTime: o.input }),
  trajectoryMetadata: { rootConversationId: id, ...(o.created === undefined ? {} : { createdAt: o.created }) },
});

const named = { named: true };

describe("the rotation rule for a conversation the caller named", () => {
  it("never leaves a named conversation that has had no turn, however active a sibling is", () => {
    const summaries = { a: root("a", { created: "2026-01-01T09:00:00Z" }), b: root("b", { created: "2026-01-01T09:30:00Z", input: "2026-01-01T10:00:00Z" }) };
    expect(rotationTarget("a", summaries)).toBe("b"); // the rule for a conversation the session chose
    expect(rotationTarget("a", summaries, new Set(), named)).toBeUndefined();
  });

  it("follows a /clear: a sibling created after the named one's last turn and used since, while the named one is idle", () => {
    const summaries = {
      a: root("a", { created: "2026-01-01T09:00:00Z", input: "2026-01-01T10:00:00Z" }),
      b: root("b", { created: "2026-01-01T10:05:00Z", input: "2026-01-01T10:06:00Z" }),
    };
    expect(rotationTarget("a", summaries, new Set(), named)).toBe("b");
  });

  it("does not leave a named conversation for a sibling that existed before its last turn", () => {
    const summaries = {
      a: root("a", { created: "2026-01-01T09:00:00Z", input: "2026-01-01T10:00:00Z" }),
      b: root("b", { created: "2026-01-01T08:00:00Z", input: "2026-01-01T10:06:00Z" }),
    };
    expect(rotationTarget("a", summaries)).toBe("b");
    expect(rotationTarget("a", summaries, new Set(), named)).toBeUndefined();
  });

  it("does not leave a named conversation while it runs", () => {
    const summaries = {
      a: root("a", { created: "2026-01-01T09:00:00Z", input: "2026-01-01T10:00:00Z", status: RUNNING }),
      b: root("b", { created: "2026-01-01T10:05:00Z", input: "2026-01-01T10:06:00Z" }),
    };
    expect(rotationTarget("a", summaries, new Set(), named)).toBeUndefined();
  });

  it("takes a sibling without a creation time only when it was not there before", () => {
    const summaries = { a: root("a", { input: "2026-01-01T10:00:00Z" }), b: root("b", { input: "2026-01-01T10:06:00Z" }) };
    expect(rotationTarget("a", summaries, new Set(), { named: true, seenBefore: new Set(["a"]) })).toBe("b");
    expect(rotationTarget("a", summaries, new Set(), { named: true, seenBefore: new Set(["a", "b"]) })).toBeUndefined();
    expect(rotationTarget("a", summaries, new Set(), named)).toBeUndefined();
  });
});
