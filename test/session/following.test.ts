import { describe as group, expect, it } from "vitest";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { AgySession, createSummariesBoard, type AgySessionApi, type AttachOptions } from "../../src/session/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { describe, isTurnEnd, wrapClient } from "./support/session-world.js";
import { until } from "../support/until.js";

/** A session with its own event log and a count of its GetAllCascadeTrajectories readings. */
interface Follower {
  session: AgySessionApi;
  log: MapperEvent[];
  readings(): number;
  /** GetCascadeTrajectorySteps calls (reads and polls). */
  steps(): number;
  reading: Promise<void>;
}

async function follower(sim: SimServer, options: Partial<AttachOptions>): Promise<Follower> {
  let readings = 0;
  let steps = 0;
  const clientFactory = (o: Parameters<typeof createAgyRpcClient>[0]) => {
    const real = createAgyRpcClient(o);
    return wrapClient(real, {
      getAllCascadeTrajectories: (...args) => {
        readings++;
        return real.getAllCascadeTrajectories(...args);
      },
      getCascadeTrajectorySteps: (...args) => {
        steps++;
        return real.getCascadeTrajectorySteps(...args);
      },
    });
  };
  // Each session reads on its own here: the readings this test counts are one session's (a shared board would split them).
  const session = await AgySession.attach({ url: sim.plainUrl, clientFactory, summariesBoard: createSummariesBoard(), ...options });
  const log: MapperEvent[] = [];
  const reading = (async () => {
    for await (const event of session.events()) log.push(event);
  })();
  return { session, log, readings: () => readings, steps: () => steps, reading };
}

async function closeAll(followers: Follower[], sim: SimServer): Promise<void> {
  await Promise.all(followers.map((f) => f.session.close()));
  await Promise.all(followers.map((f) => f.reading.catch(() => undefined)));
  await sim.close();
}

const shown = (f: Follower) => f.log.map(describe).join(", ");

group("following the conversation the caller named", () => {
  it("keeps 20 sessions on a named conversation with no turn yet while a sibling is busy, and they all see its first turn", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    const followers: Follower[] = [];
    try {
      const port = sim.engine.tuiPort();
      const sibling = sim.engine.activeConversationId;
      port.submitTurn("Say hello in one short sentence.");
      await sim.engine.conversation(sibling)!.whenIdle();
      const named = sim.engine.startHeadless();
      for (let i = 0; i < 20; i++) followers.push(await follower(sim, { conversationId: named.id, idleCheckIntervalMs: 100 }));
      // The sibling works on while every session checks the server several times.
      port.submitTurn("Write a long essay about tmux");
      await until(() => followers.every((f) => f.readings() >= 3), "three rotation checks by every session", {
        everyMs: 10,
        seen: () => followers.map((f) => f.readings()).join(" "),
      });
      named.submit("Say hello in one short sentence.");
      for (const f of followers) {
        await until(
          () => f.log.some((e) => e.type === "user_message" && e.conversationId === named.id) && f.log.some(isTurnEnd),
          "the named conversation's first turn",
          { everyMs: 10, seen: () => shown(f) },
        );
      }
      // The sibling's activity is newer than the named one's now; still no reason to leave it.
      const checked = followers.map((f) => f.readings());
      sim.engine.conversation(sibling)!.submit("Say hello in one short sentence.");
      await until(() => followers.every((f, i) => f.readings() >= checked[i]! + 3), "three more checks by every session", { everyMs: 10 });
      for (const f of followers) {
        expect(f.session.conversationId).toBe(named.id);
        expect(f.log.filter((e) => e.type === "conversation_rotated").map(describe)).toEqual([]);
        expect(
          f.log.every((e) => e.conversationId === named.id),
          shown(f),
        ).toBe(true);
      }
    } finally {
      await closeAll(followers, sim);
    }
  }, 60_000);

  it("still follows a real /clear from the named conversation, in every session", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    const followers: Follower[] = [];
    try {
      const port = sim.engine.tuiPort();
      const first = sim.engine.activeConversationId;
      for (let i = 0; i < 3; i++) followers.push(await follower(sim, { conversationId: first, idleCheckIntervalMs: 50 }));
      port.submitTurn("Say hello in one short sentence.");
      for (const f of followers) await until(() => f.log.some(isTurnEnd), "the first turn's end", { everyMs: 10, seen: () => shown(f) });
      port.clear();
      const cleared = sim.engine.activeConversationId;
      expect(cleared).not.toBe(first);
      port.submitTurn("Say hello in one short sentence.");
      for (const f of followers) {
        await until(() => f.log.some((e) => e.type === "user_message" && e.conversationId === cleared), "the turn after /clear", {
          everyMs: 10,
          seen: () => shown(f),
        });
        expect(f.log.find((e) => e.type === "conversation_rotated")).toMatchObject({ previousConversationId: first, conversationId: cleared });
        expect(f.session.conversationId).toBe(cleared);
      }
    } finally {
      await closeAll(followers, sim);
    }
  }, 30_000);
});

group("following the server's conversation when none was named", () => {
  it("makes its first rotation check one interval after attaching, not at once", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    const followers: Follower[] = [];
    try {
      // Two roots without turns: the session binds the first; then the second becomes active,
      // which a rotation check would adopt (spike-notes §4.10).
      const other = sim.engine.startHeadless();
      const f = await follower(sim, { mode: "poll", pollIntervalMs: 10, idleCheckIntervalMs: 60_000 });
      followers.push(f);
      expect(f.session.conversationId).toBe(sim.engine.activeConversationId);
      const atAttach = f.readings(); // the reading that chose the conversation
      other.submit("Say hello in one short sentence.");
      await other.whenIdle();
      const polls = f.steps();
      await until(() => f.steps() >= polls + 5, "five polls", { everyMs: 10 });
      expect(f.readings()).toBe(atAttach);
      expect(f.log.some((e) => e.type === "conversation_rotated")).toBe(false);
    } finally {
      await closeAll(followers, sim);
    }
  });

  it("adopts a more recently active conversation, and follows one it left once that one is used again", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    const followers: Follower[] = [];
    try {
      const port = sim.engine.tuiPort();
      const first = sim.engine.activeConversationId;
      port.submitTurn("Say hello in one short sentence.");
      await sim.engine.conversation(first)!.whenIdle();
      const f = await follower(sim, { idleCheckIntervalMs: 50 });
      followers.push(f);
      expect(f.session.conversationId).toBe(first);
      port.clear();
      const cleared = sim.engine.activeConversationId;
      port.submitTurn("Say hello in one short sentence.");
      await until(() => f.session.conversationId === cleared, "the rotation to the cleared conversation", { everyMs: 10, seen: () => shown(f) });
      sim.engine.conversation(first)!.submit("Say hello in one short sentence.");
      await until(() => f.session.conversationId === first, "the rotation back to the first conversation", { everyMs: 10, seen: () => shown(f) });
      expect(f.log.filter((e) => e.type === "conversation_rotated").map((e) => e.conversationId)).toEqual([cleared, first]);
    } finally {
      await closeAll(followers, sim);
    }
  });
});
