/**
 * `AgySession.interactions`: the ledger's fold of what the session publishes,
 * read as a snapshot and heard as changes, against a simulated agy on
 * loopback — a gate opened live, answered, and a history read at attach.
 */
import { describe, expect, it } from "vitest";
import type { LedgerChange } from "../../src/session/index.js";
import { until } from "../support/until.js";
import { isRequested, isTurnEnd, startWorld } from "./support/session-world.js";

describe("AgySession.interactions", () => {
  it("opens a live gate, resolves it with who decided, and tells a subscriber each change once", async () => {
    const world = await startWorld();
    try {
      const interactions = world.session.interactions!;
      const heard: LedgerChange[] = [];
      const unsubscribe = interactions.subscribe((change) => heard.push(change));
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the permission gate");
      const open = await until(
        () => (interactions.snapshot().open.some((r) => r.interactionId === gate.interactionId) ? interactions.snapshot() : undefined),
        "the gate open in the snapshot",
        { ms: 10_000, seen: () => JSON.stringify(interactions.snapshot().open.map((r) => r.interactionId)) },
      );
      expect(open.open.map((r) => r.interactionId)).toEqual([gate.interactionId]);
      // The snapshot is a copy: changing it changes nothing the session holds.
      open.open.length = 0;
      open.entries[0]!.state = "resolved";
      expect(interactions.snapshot().open).toHaveLength(1);
      expect(interactions.snapshot().entries[0]!.state).toBe("open");

      expect((await world.session.approve(gate.interactionId, { decidedBy: "test:bot" })).result).toBe("delivered");
      await world.waitFor(isTurnEnd, "the end of the turn");
      const entry = await until(
        () => interactions.snapshot().entries.find((e) => e.interactionId === gate.interactionId && e.state === "resolved") ?? undefined,
        "the gate resolved in the snapshot",
        { ms: 10_000, seen: () => JSON.stringify(interactions.snapshot().entries) },
      );
      expect(entry).toMatchObject({ state: "resolved", decidedBy: "test:bot", resolution: { outcome: "approved" } });
      expect(interactions.snapshot().open).toEqual([]);
      expect(heard.map((c) => [c.kind, c.entry.interactionId])).toEqual([
        ["opened", gate.interactionId],
        ["resolved", gate.interactionId],
      ]);
      unsubscribe();
    } finally {
      await world.close();
    }
  });

  it("knows a gate that was already waiting when it attached, without a consumer reading events", async () => {
    // One session opens the gate; a second session attached afterwards folds it from its history.
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the permission gate");
      const { AgySession } = await import("../../src/session/index.js");
      const late = await AgySession.attach({ url: world.sim.plainUrl, conversationId: world.session.conversationId });
      try {
        // Reading the pending list starts the reader; no events() consumer is needed for the fold.
        await late.pending();
        const open = late.interactions!.snapshot().open;
        expect(open.map((r) => r.interactionId)).toEqual([gate.interactionId]);
      } finally {
        await late.close();
      }
    } finally {
      await world.close();
    }
  });
});
