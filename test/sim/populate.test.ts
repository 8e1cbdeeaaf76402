/**
 * `startSimServer({ populate })`: one simulator hosting many long
 * conversations for the scale benchmarks (issue 23), read over loopback as a
 * supervisor reads them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTrajectoryTracker } from "../../src/mapper/index.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";

let sim: SimServer | undefined;
let client: AgyRpcClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
  sim = undefined;
  client = undefined;
});

describe("a simulator pre-populated with conversations", () => {
  it("lists every populated conversation, each with its own settled steps that map without a diagnostic", async () => {
    sim = await startSimServer({ speed: 0, populate: { conversations: 3, steps: 120 } });
    client = createAgyRpcClient({ baseUrl: sim.plainUrl });
    expect(sim.populatedIds).toHaveLength(3);
    expect(new Set(sim.populatedIds).size).toBe(3);
    const listed = JSON.stringify(await client.getAllCascadeTrajectories({}));
    for (const id of sim.populatedIds) expect(listed).toContain(id);
    const id = sim.populatedIds[1]!;
    const { steps } = await client.getCascadeTrajectorySteps({ conversationId: id });
    expect(steps).toHaveLength(120);
    const events = createTrajectoryTracker({ conversationId: id }).applySnapshot({ steps });
    expect(events.filter((e) => e.type === "diagnostic")).toEqual([]);
    // Every copied turn is a turn of its own: its user message, its answer, its close.
    const users = events.filter((e) => e.type === "user_message").length;
    expect(users).toBeGreaterThan(5);
    expect(events.filter((e) => e.type === "status" && e.reason === "turn_started")).toHaveLength(users);
    expect(events.filter((e) => e.type === "message").length).toBeGreaterThanOrEqual(users);
    expect(JSON.stringify(events)).not.toContain(sim.populatedIds[0]!);
    const tail = await client.getCascadeTrajectorySteps({ conversationId: id, stepOffset: 118 });
    expect(tail.steps).toHaveLength(2);
  });
});
