/**
 * The bookkeeping behind `decidedBy`: which resolution carries it, and that
 * holding a resolution while its answer is on the wire keeps every event in
 * order.
 */
import { describe, expect, it } from "vitest";
import { ResolutionAttribution } from "../../src/session/resolution-attribution.js";
import type { MapperEvent } from "../../src/mapper/index.js";

const resolved = (interactionId: string, outcome: "approved" | "timed_out" = "approved"): MapperEvent =>
  ({
    type: "interaction_resolved",
    conversationId: "c",
    trajectoryId: "t",
    stepIndex: 3,
    interactionId,
    kind: "permission",
    outcome,
    stepStatus: "RUNNING",
  }) as MapperEvent;
const other = (text: string): MapperEvent => ({ type: "user_message", conversationId: "c", trajectoryId: "t", stepIndex: 9, text }) as MapperEvent;

function world() {
  const published: MapperEvent[][] = [];
  return { published, attribution: new ResolutionAttribution((events) => published.push(events)) };
}

describe("attributing resolutions", () => {
  it("holds a resolution whose answer is on the wire, and what follows it, until the call settles", () => {
    const { published, attribution } = world();
    attribution.sending("int_a", "cli");
    attribution.offer([other("before")]);
    attribution.offer([resolved("int_a")]);
    attribution.offer([other("after")]);
    expect(published).toEqual([[other("before")]]);
    attribution.sent("int_a", true);
    expect(published).toEqual([[other("before")], [{ ...resolved("int_a"), decidedBy: "cli" }], [other("after")]]);
  });

  it("drops the attribution when agy refused the answer, unless another of ours got through", () => {
    const { published, attribution } = world();
    attribution.sending("int_a", "cli");
    attribution.offer([resolved("int_a")]);
    attribution.sent("int_a", false);
    attribution.sending("int_b", "cli");
    attribution.sending("int_b", "cli");
    attribution.sent("int_b", true);
    attribution.sent("int_b", false);
    attribution.offer([resolved("int_b")]);
    expect(published).toEqual([[resolved("int_a")], [{ ...resolved("int_b"), decidedBy: "cli" }]]);
  });

  it("never attributes a timeout, and releases everything held on close", () => {
    const { published, attribution } = world();
    attribution.sending("int_a", "cli");
    attribution.offer([resolved("int_a", "timed_out")]);
    attribution.release();
    expect(published).toEqual([[resolved("int_a", "timed_out")]]);
  });
});
