import { describe as group, expect, it } from "vitest";
import { describe, isRequested, isTurnEnd, startWorld, wrapClient, type World } from "./support/session-world.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { RpcError } from "../../src/errors.js";
import { AgySession } from "../../src/session/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { parseScenario, type SimFaults } from "../../src/sim/index.js";
import { until } from "../support/until.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

/** The committed transitions of a run, without the ids that differ between runs. */
function committed(log: MapperEvent[]): string[] {
  return log
    .filter((e) => !["message_delta", "reasoning_delta", "diagnostic", "usage"].includes(e.type))
    .map((e) => {
      const text = e.type === "message" || e.type === "user_message" ? `:${e.text}` : e.type === "function_call_output" ? `:${e.output}` : "";
      return `${describe(e)}${text}`;
    });
}

/** Plays "Run pwd" then "Show git status…" (two chained gates), approving every gate. */
async function playApprovingAll(world: World): Promise<void> {
  const approved = new Set<string>();
  const approveAll = async (count: number) => {
    while (approved.size < count) {
      const gate = (await world.waitFor((e): e is Requested => isRequested(e) && !approved.has(e.interactionId), "a gate")) as Requested;
      approved.add(gate.interactionId);
      expect((await world.session.approve(gate.interactionId)).result).toBe("delivered");
    }
  };
  const ends = () => world.log.filter(isTurnEnd).length;
  world.sim.engine.tuiPort().submitTurn("Run pwd");
  await approveAll(1);
  await world.waitFor(() => ends() >= 1, "the first turn's end");
  world.sim.engine.tuiPort().submitTurn("Show git status and recent commits");
  await approveAll(3);
  await world.waitFor(() => ends() >= 2, "the second turn's end");
}

group("following a conversation", () => {
  it("finds both gates of a chained command while the stream is silent", async () => {
    const world = await startWorld();
    try {
      world.sim.engine.tuiPort().submitTurn("Show git status and recent commits");
      const first = await world.waitFor(isRequested, "the first gate");
      expect((await world.session.approve(first.interactionId)).result).toBe("delivered");
      const second = (await world.waitFor((e): e is Requested => isRequested(e) && e.stepIndex > first.stepIndex, "the second gate")) as Requested;
      expect(second.request.kind).toBe("permission");
      expect((await world.session.approve(second.interactionId)).result).toBe("delivered");
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(world.log.filter(isRequested)).toHaveLength(2);
    } finally {
      await world.close();
    }
  });

  for (const [name, faults] of [
    ["dropped", { dropStreamAfterFrames: 3 }],
    ["cut mid-frame", { closeMidFrameAfterFrames: 4 }],
  ] as Array<[string, SimFaults]>) {
    it(`loses and duplicates no event when the stream is ${name} mid-turn`, async () => {
      const clean = await startWorld();
      try {
        await playApprovingAll(clean);
      } finally {
        await clean.close();
      }
      let streams = 0;
      const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]) => {
        const real = createAgyRpcClient(options);
        return wrapClient(real, {
          streamAgentStateUpdates: (...args) => {
            streams++;
            return real.streamAgentStateUpdates(...args);
          },
        });
      };
      const faulty = await startWorld({ faults }, { clientFactory });
      try {
        await playApprovingAll(faulty);
      } finally {
        await faulty.close();
      }
      expect(streams).toBeGreaterThan(1);
      expect(committed(faulty.log)).toEqual(committed(clean.log));
    });
  }

  it("polls when asked to and sees the same transitions as the stream", async () => {
    const clean = await startWorld();
    try {
      await playApprovingAll(clean);
    } finally {
      await clean.close();
    }
    const polled = await startWorld({}, { mode: "poll", pollIntervalMs: 50 });
    try {
      await playApprovingAll(polled);
    } finally {
      await polled.close();
    }
    const settled = (log: MapperEvent[]) => committed(log).filter((d) => !d.startsWith("status:idle/run_idle"));
    expect(settled(polled.log)).toEqual(settled(clean.log));
  });

  it("finds the server again after it restarted on new ports", async () => {
    let located = 0;
    const world = await startWorld({}, (sim) => ({
      url: undefined,
      locate: async () => {
        located++;
        return { url: sim.plainUrl, how: "test" };
      },
      relocateAfterFailures: 1,
    }));
    try {
      world.sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      await world.waitFor(isTurnEnd, "the first turn's end");
      const before = world.session.url;
      await world.sim.restart();
      await new Promise((r) => setTimeout(r, 50));
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate after the restart");
      expect(world.session.url).not.toBe(before);
      expect(world.session.url).toBe(world.sim.plainUrl);
      expect(located).toBeGreaterThanOrEqual(2);
      expect((await world.session.approve(gate.interactionId)).result).toBe("delivered");
      await world.waitFor((e) => isTurnEnd(e) && world.log.filter(isTurnEnd).length >= 2, "the second turn's end");
    } finally {
      await world.close();
    }
  });

  it("keeps two conversations on one server apart", async () => {
    const world = await startWorld();
    const other = world.sim.engine.startHeadless();
    const second = await AgySession.attach({ url: world.sim.plainUrl, conversationId: other.id });
    const otherLog: MapperEvent[] = [];
    const reading = (async () => {
      for await (const e of second.events()) otherLog.push(e);
    })();
    try {
      other.submit("Run pwd");
      world.sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      await world.waitFor(isTurnEnd, "the first conversation's turn end");
      const deadline = Date.now() + 10_000;
      while (!otherLog.some(isRequested) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const gate = otherLog.find(isRequested);
      expect(gate?.conversationId).toBe(other.id);
      expect(world.log.some(isRequested)).toBe(false);
      expect(world.log.every((e) => e.conversationId === world.session.conversationId)).toBe(true);
      expect(await world.session.approve(gate!.interactionId)).toEqual({ result: "not_found" });
      expect((await second.approve(gate!.interactionId)).result).toBe("delivered");
    } finally {
      await second.close();
      await reading;
      await world.close();
    }
  });

  it("follows /clear to the new conversation and names the model", async () => {
    const world = await startWorld({}, { idleCheckIntervalMs: 50 });
    try {
      const port = world.sim.engine.tuiPort();
      port.submitTurn("Say hello in one short sentence.");
      await world.waitFor(isTurnEnd, "the first turn's end");
      const changed = world.log.find((e) => e.type === "model_changed");
      expect(changed).toMatchObject({ model: "MODEL_PLACEHOLDER_M20", displayName: "Gemini (Medium)" });
      const before = world.session.conversationId;
      port.clear();
      port.submitTurn("Run pwd");
      const rotated = await world.waitFor((e) => e.type === "conversation_rotated", "the rotation");
      expect(rotated).toMatchObject({ previousConversationId: before, conversationId: world.sim.engine.activeConversationId });
      const gate = await world.waitFor(isRequested, "the gate in the new conversation");
      expect(gate.conversationId).toBe(world.sim.engine.activeConversationId);
      expect(world.session.conversationId).toBe(world.sim.engine.activeConversationId);
      expect((await world.session.approve(gate.interactionId)).result).toBe("delivered");
    } finally {
      await world.close();
    }
  });

  it("interrupts a running turn with a cancel and a parked one with a deny", async () => {
    const world = await startWorld({ speed: 1 });
    try {
      const port = world.sim.engine.tuiPort();
      port.submitTurn("Write a long essay about tmux");
      await world.waitFor((e) => e.type === "message_delta", "the answer streaming");
      expect(await world.session.interrupt()).toEqual({ result: "cancelled" });
      await world.waitFor(isTurnEnd, "the cancelled turn's end");
      expect(await world.session.interrupt()).toEqual({ result: "idle" });
      port.submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate");
      expect(await world.session.interrupt()).toEqual({ result: "denied", stepIndices: [gate.stepIndex] });
      const resolved = await world.waitFor((e) => e.type === "interaction_resolved", "the gate's resolution");
      expect(resolved).toMatchObject({ interactionId: gate.interactionId });
    } finally {
      await world.close();
    }
  });

  it("does not close a running turn on a stream frame older than the snapshot that showed the turn", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held = false;
    let calls = 0;
    // The first stream's replay frame (run status IDLE) is held until a turn has begun, then delivered late.
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]) => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        streamAgentStateUpdates: (input, callOptions) => {
          const stream = real.streamAgentStateUpdates(input, { ...callOptions, onOpen: undefined });
          if (calls++ > 0) return stream;
          return (async function* () {
            const it = stream[Symbol.asyncIterator]();
            const first = await it.next();
            held = true;
            await released;
            if (first.done !== true) yield first.value;
            for (;;) {
              const next = await it.next();
              if (next.done === true) return;
              yield next.value;
            }
          })();
        },
      });
    };
    const world = await startWorld({ speed: 1 }, { clientFactory });
    try {
      const conv = world.sim.engine.conversation(world.session.conversationId)!;
      await until(() => held, "the replay frame to be held", { ms: 10_000, everyMs: 10 });
      world.sim.engine.tuiPort().submitTurn("Write a long essay about stale frames");
      await until(() => conv.steps.length > 0 && conv.running, "the turn to begin", { ms: 10_000, everyMs: 10 });
      release();
      await world.waitFor((e) => e.type === "user_message", "the turn in the events");
      await world.waitFor((e) => e.type === "message_delta", "the answer streaming");
      expect(conv.running).toBe(true);
      expect(world.log.filter(isTurnEnd).map(describe)).toEqual([]);
      await world.waitFor(isTurnEnd, "the end of the turn", 15_000);
      expect(world.log.find(isTurnEnd)).toMatchObject({ reason: "turn_completed" });
    } finally {
      await world.close();
    }
  });

  for (const mode of ["stream", "poll"] as const) {
    it(`closes a turn its steps never close once agy reports it idle twice (${mode})`, async () => {
      const scenarios = [
        parseScenario(
          { description: "A tool call and no answer.", match: { text: "Just run it" }, steps: [{ kind: "command", commandLine: "true", gate: false }] },
          "tool-only",
        ),
      ];
      const world = await startWorld({ scenarios }, { mode, pollIntervalMs: 50, idleCheckIntervalMs: 50 });
      try {
        world.sim.engine.tuiPort().submitTurn("Just run it");
        await world.waitFor((e) => e.type === "function_call_output", "the tool's output");
        const end = await world.waitFor(isTurnEnd, "the end of the turn");
        expect(end).toMatchObject({ status: "idle", reason: "run_idle" });
        expect(world.log.filter(isTurnEnd)).toHaveLength(1);
      } finally {
        await world.close();
      }
    });
  }

  it("never takes a sub-agent's conversation for a /clear rotation", async () => {
    const world = await startWorld({}, { idleCheckIntervalMs: 30 });
    try {
      const parent = world.session.conversationId;
      world.sim.engine.tuiPort().submitTurn("Research the test setup with a subagent");
      await world.waitFor((e) => e.type === "message" && e.text.includes("sub-agent found"), "the parent's answer");
      const children = world.sim.engine.conversations().filter((c) => c.id !== parent);
      expect(children.length).toBeGreaterThan(0);
      // Give the rotation check several readings with the child more recently active than its parent.
      const readings = Date.now() + 300;
      await until(() => Date.now() > readings, "a few rotation checks", { ms: 10_000, everyMs: 10 });
      expect(world.log.some((e) => e.type === "conversation_rotated")).toBe(false);
      expect(world.session.conversationId).toBe(parent);
    } finally {
      await world.close();
    }
  });

  it("falls back to polling when the stream keeps failing, and says so once", async () => {
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]) => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        streamAgentStateUpdates: () =>
          (async function* () {
            throw new RpcError("http_status", "StreamAgentStateUpdates answered HTTP 503", { method: "StreamAgentStateUpdates", httpStatus: 503 });
          })(),
      });
    };
    const world = await startWorld({}, { clientFactory, pollIntervalMs: 50 });
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate through polling");
      expect((await world.session.approve(gate.interactionId)).result).toBe("delivered");
      await world.waitFor(isTurnEnd, "the end of the turn");
      const lost = world.log.filter((e) => e.type === "diagnostic" && e.code === "connection_lost");
      expect(lost).toHaveLength(1);
    } finally {
      await world.close();
    }
  });

  it("gives a slow consumer a diagnostic and the open interactions instead of blocking the others", async () => {
    const world = await startWorld({}, { consumerBuffer: 3 });
    try {
      world.sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      await world.waitFor(isTurnEnd, "the first turn's end");
      const slow = world.session.events()[Symbol.asyncIterator]();
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate (fast consumer)");
      await new Promise((r) => setTimeout(r, 200));
      const seen: MapperEvent[] = [];
      for (let i = 0; i < 2; i++) {
        const next = await Promise.race([slow.next(), new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000))]);
        if (next === undefined)
          throw new Error(`the slow consumer got nothing more after ${seen.map(describe).join(", ")}; the fast one saw ${world.log.map(describe).join(", ")}`);
        seen.push(next.value as MapperEvent);
      }
      expect(seen[0]).toMatchObject({ type: "diagnostic", code: "events_dropped" });
      expect(seen[1]).toMatchObject({ type: "interaction_requested", interactionId: gate.interactionId });
      await slow.return?.();
    } finally {
      await world.close();
    }
  });
});
