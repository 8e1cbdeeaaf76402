import { afterEach, describe, expect, it } from "vitest";
import { COMMAND_GROUP, commandsStream, resultsStream } from "../../src/fleet/index.js";
import { startRelayWorld, type RelayWorld } from "./support/relay-world.js";
import { until } from "../support/until.js";

let world: RelayWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function command(w: RelayWorld, fields: Record<string, string>): Promise<string> {
  return (await w.bot.xadd(commandsStream(w.host), "*", ...Object.entries(fields).flat()))!;
}

async function pendingCount(w: RelayWorld): Promise<number> {
  const summary = (await w.bot.xpending(commandsStream(w.host), COMMAND_GROUP)) as [number, ...unknown[]];
  return summary[0];
}

async function gate(w: RelayWorld, text = "Run pwd"): Promise<{ interactionId: string; stepIndex: number }> {
  w.sim.engine.tuiPort().submitTurn(text);
  const entry = await w.waitForEvent((event) => event["type"] === "interaction_requested", "the published gate");
  return JSON.parse(entry.fields["event"]!) as { interactionId: string; stepIndex: number };
}

function completed(w: RelayWorld, stepIndex: number): number {
  const step = w.sim.engine.conversation(w.conversationId)!.steps[stepIndex] as { completedInteractions?: unknown[] };
  return step.completedInteractions?.length ?? 0;
}

describe("the relay takes commands", () => {
  it("approves through the answer path once, writes the result, then acknowledges", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const requested = await gate(w);
    const commandId = await command(w, {
      requestId: "r-1",
      type: "approve",
      conversationId: w.conversationId,
      interactionId: requested.interactionId,
      body: "{}",
      principal: "approval-bot",
    });
    const { entry, result } = await w.waitForResult("r-1");
    expect(result).toEqual({ interactionId: requested.interactionId, result: "delivered", stepIndex: requested.stepIndex });
    expect(entry.fields["commandId"]).toBe(commandId);
    expect(new Date(entry.fields["time"]!).toISOString()).toBe(entry.fields["time"]);
    expect(await pendingCount(w)).toBe(0);
    const resolved = await w.waitForEvent((event) => event["type"] === "interaction_resolved", "the resolution");
    // The principal is who decided, on the event the delivery causes.
    expect(JSON.parse(resolved.fields["event"]!)).toMatchObject({ outcome: "approved", decidedBy: "relay:approval-bot" });
    expect(completed(w, requested.stepIndex)).toBe(1);
  });

  it("answers a question and denies with an instruction, each through its body", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const question = await gate(w, "Help me start a project");
    await command(w, {
      requestId: "q-1",
      type: "answer",
      conversationId: w.conversationId,
      interactionId: question.interactionId,
      body: JSON.stringify({ options: ["2"] }),
      principal: "ana",
    });
    expect((await w.waitForResult("q-1")).result).toMatchObject({ result: "delivered", interactionId: question.interactionId });
    const resolved = await w.waitForEvent(
      (event) => event["type"] === "interaction_resolved" && event["interactionId"] === question.interactionId,
      "the answered question",
    );
    expect(JSON.stringify(JSON.parse(resolved.fields["event"]!).response)).toContain('"selectedOptionIds":["2"]');
  });

  it("runs a request sent twice once: the second entry gets duplicate with the first command's id", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const requested = await gate(w);
    const fields = {
      requestId: "same",
      type: "deny",
      conversationId: w.conversationId,
      interactionId: requested.interactionId,
      body: JSON.stringify({ instruction: "not now" }),
      principal: "bot",
    };
    const first = await command(w, fields);
    await command(w, fields);
    await until(async () => ((await w.entries(resultsStream(w.host))).length === 2 ? true : undefined), "two results");
    const results = (await w.entries(resultsStream(w.host))).map((e) => JSON.parse(e.fields["result"]!) as Record<string, unknown>);
    expect(results[0]).toMatchObject({ result: "delivered" });
    expect(results[1]).toMatchObject({ result: "duplicate", firstCommandId: first });
    expect(results[1]!["reason"]).toMatch(/already taken as command .* give each command a new requestId/);
    expect(completed(w, requested.stepIndex)).toBe(1);
    expect(await pendingCount(w)).toBe(0);
  });

  it("answers bad commands with a result that says what is wrong, and acknowledges them", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const cases: [Record<string, string>, RegExp][] = [
      [{ requestId: "b-1", type: "launch", conversationId: w.conversationId, principal: "bot" }, /is not one of approve, deny, answer, send_turn, interrupt/],
      [{ requestId: "b-2", type: "approve", conversationId: w.conversationId, principal: "bot", body: "{}" }, /needs the interactionId/],
      [{ requestId: "b-3", type: "send_turn", conversationId: w.conversationId, principal: "bot", body: "{not json" }, /body is not JSON/],
      [{ requestId: "b-4", type: "interrupt", conversationId: w.conversationId, body: "{}" }, /names no principal/],
      [
        {
          requestId: "b-5",
          type: "answer",
          conversationId: w.conversationId,
          interactionId: "int_x",
          principal: "bot",
          body: JSON.stringify({ options: [1] }),
        },
        /needs a body \{"options"/,
      ],
      [
        { requestId: "b-6", type: "interrupt", conversationId: "no-such-conversation", principal: "bot", body: "{}" },
        /follows no conversation no-such-conversation/,
      ],
    ];
    for (const [fields] of cases) await command(w, fields);
    await command(w, { type: "approve" });
    for (const [fields, reason] of cases) {
      const { result } = await w.waitForResult(fields["requestId"]!);
      expect(result["result"]).toMatch(/^(rejected|unknown_conversation)$/);
      expect(result["reason"]).toMatch(reason);
    }
    const noId = await until(
      async () => (await w.entries(resultsStream(w.host))).find((e) => e.fields["requestId"] === ""),
      "the result of the command without a requestId",
    );
    expect(JSON.parse(noId.fields["result"]!)["reason"]).toMatch(/no usable requestId/);
    expect(await pendingCount(w)).toBe(0);
  });

  it("reports not_found for an interaction the conversation never had", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    await command(w, {
      requestId: "n-1",
      type: "approve",
      conversationId: w.conversationId,
      interactionId: "int_0000000000000000",
      body: "{}",
      principal: "bot",
    });
    expect((await w.waitForResult("n-1")).result).toEqual({ interactionId: "int_0000000000000000", result: "not_found" });
  });

  it("leaves a command pending while its result cannot be written, and answers it once when it can", async () => {
    world = await startRelayWorld();
    const w = world;
    // A results key of the wrong type makes every result write fail.
    await w.bot.set(resultsStream(w.host), "not a stream");
    await w.startRelay();
    const requested = await gate(w);
    await command(w, {
      requestId: "p-1",
      type: "approve",
      conversationId: w.conversationId,
      interactionId: requested.interactionId,
      body: "{}",
      principal: "bot",
    });
    await until(() => (completed(w, requested.stepIndex) === 1 ? true : undefined), "agy to receive the approval");
    expect(await pendingCount(w)).toBe(1);
    await w.bot.del(resultsStream(w.host));
    const { result } = await w.waitForResult("p-1");
    // Written by the first attempt's retry (delivered) or by a claim that ran it again (already_resolved).
    expect(["delivered", "already_resolved"]).toContain(result["result"]);
    await until(async () => ((await pendingCount(w)) === 0 ? true : undefined), "the acknowledgement");
    expect((await w.entries(resultsStream(w.host))).filter((e) => e.fields["requestId"] === "p-1")).toHaveLength(1);
    expect(completed(w, requested.stepIndex)).toBe(1);
  });
});

describe("the relay's turn and interrupt commands", () => {
  it("interrupts a waiting gate by denying it, and says which step", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const requested = await gate(w);
    await command(w, { requestId: "i-1", type: "interrupt", conversationId: w.conversationId, body: "{}", principal: "bot" });
    expect((await w.waitForResult("i-1")).result).toEqual({ result: "denied", stepIndices: [requested.stepIndex] });
  });

  it("reports a turn it cannot type (no pane) as failed with the session's sentence", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    await command(w, { requestId: "t-1", type: "send_turn", conversationId: w.conversationId, body: JSON.stringify({ text: "hello" }), principal: "bot" });
    const { result } = await w.waitForResult("t-1");
    expect(result["result"]).toBe("failed");
    expect(String(result["reason"])).toMatch(/pane/);
  });
});

describe("a standby relay", () => {
  it("takes the host's commands but publishes neither events nor index entries", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay({ publish: false });
    const watcher = await w.session();
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const pending = await until(async () => (await watcher.pending())[0], "the gate to wait");
    await command(w, {
      requestId: "s-1",
      type: "approve",
      conversationId: w.conversationId,
      interactionId: pending.interactionId,
      body: "{}",
      principal: "bot",
    });
    expect((await w.waitForResult("s-1")).result).toMatchObject({ result: "delivered", interactionId: pending.interactionId });
    expect(await w.events()).toEqual([]);
    expect(await w.entries("agy:sessions")).toEqual([]);
  });
});
