import { describe, expect, it } from "vitest";
import { AgySession, type AgySessionApi } from "../../src/session/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { describe as describeEvent } from "./support/session-world.js";

/** Pulls events from `it` until `stop` matches one (included); fails saying what it saw. */
async function takeUntil(it: AsyncIterator<MapperEvent>, stop: (e: MapperEvent) => boolean, what: string, ms = 10_000): Promise<MapperEvent[]> {
  const seen: MapperEvent[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    const next = await Promise.race([it.next(), new Promise<"late">((r) => setTimeout(() => r("late"), Math.max(0, left)))]);
    if (next === "late" || next.done === true)
      throw new Error(`${next === "late" ? `timed out after ${ms} ms` : "the events ended"} waiting for ${what}; saw ${seen.map(describeEvent).join(", ")}`);
    seen.push(next.value);
    if (stop(next.value)) return seen;
  }
}

const isTurnEnd = (e: MapperEvent) => e.type === "status" && (e.status === "idle" || e.status === "failed");

/** A simulator whose conversation has one finished turn and one parked gate. */
async function worldWithHistory(): Promise<{ sim: SimServer; session: AgySessionApi; close(): Promise<void> }> {
  const sim = await startSimServer({ speed: 0.05 });
  const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
  sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
  await conv.whenIdle();
  sim.engine.tuiPort().submitTurn("Run pwd");
  const deadline = Date.now() + 10_000;
  while (conv.waitingIndices().length === 0) {
    if (Date.now() > deadline) throw new Error("the gate never parked");
    await new Promise((r) => setTimeout(r, 10));
  }
  const session = await AgySession.attach({ url: sim.plainUrl, conversationId: conv.id });
  return {
    sim,
    session,
    async close() {
      await session.close();
      await sim.close();
    },
  };
}

describe("history and live", () => {
  it("ends the replay with one history_end, and everything after it is live", async () => {
    const w = await worldWithHistory();
    try {
      const it = w.session.events()[Symbol.asyncIterator]();
      const history = await takeUntil(it, (e) => e.type === "history_end", "history_end");
      expect(history.filter((e) => e.type === "user_message").map((e) => (e as { text: string }).text)).toEqual([
        "Say hello in one short sentence.",
        "Run pwd",
      ]);
      expect(history.some(isTurnEnd)).toBe(true); // the old turn's end is history, before the boundary
      expect(MapperEventSchema.parse(history.at(-1))).toEqual({ type: "history_end", conversationId: w.session.conversationId });
      const gate = history.find((e) => e.type === "interaction_requested")!;
      expect((await w.session.approve((gate as { interactionId: string }).interactionId)).result).toBe("delivered");
      const live = await takeUntil(it, isTurnEnd, "the gated turn's end");
      expect(live.map((e) => e.type)).toContain("interaction_resolved");
      expect(live.filter((e) => e.type === "history_end" || e.type === "user_message")).toEqual([]);
      await it.return?.();
    } finally {
      await w.close();
    }
  });

  it("starts from now with history: false: the open interaction, then history_end", async () => {
    const w = await worldWithHistory();
    try {
      const it = w.session.events({ history: false })[Symbol.asyncIterator]();
      const before = await takeUntil(it, (e) => e.type === "history_end", "history_end");
      expect(before.map(describeEvent)).toEqual([expect.stringMatching(/^interaction_requested@\d+$/), "history_end"]);
      await it.return?.();
    } finally {
      await w.close();
    }
  });

  it("gives a later consumer the interactions open now, then its own history_end", async () => {
    const w = await worldWithHistory();
    try {
      const first = w.session.events()[Symbol.asyncIterator]();
      await takeUntil(first, (e) => e.type === "history_end", "the first consumer's history_end");
      const later = w.session.events()[Symbol.asyncIterator]();
      const start = await takeUntil(later, (e) => e.type === "history_end", "the later consumer's history_end");
      expect(start.map(describeEvent)).toEqual([expect.stringMatching(/^interaction_requested@\d+$/), "history_end"]);
      await first.return?.();
      await later.return?.();
    } finally {
      await w.close();
    }
  });
});
