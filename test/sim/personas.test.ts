/**
 * The simulator's personas (docs/simulator.md, "Personas"): each speaks only
 * what its agy version is recorded to send (spike-notes §3.2, §3.4, §10.4,
 * §10.5, §11.5, §11.6), checked on the raw bytes; and our client — the RPC
 * client, stream watcher, session and tracker, attached as a user would —
 * tells the same story under every persona.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { createSimCommand, parseSimArgs } from "../../src/cli/sim-command.js";
import { captureIo } from "../support/cli-io.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { AgySession } from "../../src/session/index.js";
import { AGY_VERSIONS, type AgyVersion } from "../../src/sim/engine/persona.js";
import type { Scenario } from "../../src/sim/engine/scenario-schema.js";
import { loadScenarios } from "../../src/sim/engine/scenarios.js";
import { startSimServer, type SimServer } from "../../src/sim/server/server.js";
import { sendTurn, startTestSim, waitForIdle } from "./support/sim-harness.js";
import { eventually, openStream, unary, type Json } from "./support/wire-client.js";

const scenarios = await loadScenarios();

async function sim(agyVersion?: AgyVersion): Promise<SimServer> {
  const server = await startTestSim(agyVersion === undefined ? {} : { agyVersion });
  onTestFinished(() => server.close());
  return server;
}

/** Every data frame of one finished turn, as the raw frame texts and parsed. */
async function framesOfTurn(server: SimServer, text: string): Promise<{ raw: string[]; frames: Json[] }> {
  const cascadeId = server.engine.activeConversationId;
  const reader = await openStream(server.tlsUrl, { conversationId: cascadeId });
  onTestFinished(() => reader.cancel());
  await reader.waitForFrame();
  await sendTurn(server, cascadeId, text);
  await reader.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE", 1);
  return { raw: reader.frames.map((f) => JSON.stringify(f)), frames: [...reader.frames] };
}

describe("persona wire fields", () => {
  it("defaults to agy 1.0.10 and refuses a version it has no persona for, naming the choices", async () => {
    const server = await sim();
    expect(server.agyVersion).toBe("1.0.10");
    await expect(startSimServer({ agyVersion: "1.3" as AgyVersion })).rejects.toMatchObject({
      code: "invalid_argument",
      message: expect.stringContaining("1.0.10, 1.1, 1.2"),
    });
  });

  it("takes the persona from `agy-bridge sim --agy-version`, and names the choices for any other value", () => {
    expect(parseSimArgs(["--agy-version", "1.2"]).agyVersion).toBe("1.2");
    expect(parseSimArgs([]).agyVersion).toBeUndefined();
    expect(() => parseSimArgs(["--agy-version", "1.0"])).toThrow("--agy-version wants one of 1.0.10, 1.1, 1.2");
  });

  it("serves the persona `agy-bridge sim --headless --agy-version` names, and says which in its JSON line", async () => {
    const run = captureIo(["--headless", "--agy-version", "1.1", "--speed", "0"]);
    const exit = createSimCommand({ self: () => ({ node: "/usr/bin/node", args: ["bin.js"], pid: 4242 }) }).run(run.io);
    onTestFinished(async () => {
      run.abort();
      await exit;
    });
    await expect.poll(() => run.stdout().includes("\n"), { timeout: 10_000, interval: 20 }).toBe(true);
    const info = JSON.parse(run.stdout()) as { agyVersion: string; tlsUrl: string; conversationId: string };
    expect(info.agyVersion).toBe("1.1");
    const res = await unary(info.tlsUrl, "GetConversationMetadata", { conversationId: info.conversationId });
    expect(res.json.metadata.workspaceUris).toEqual(["file:///home/sim/project"]);
  });

  it.each(["1.0.10", "1.1"] as const)("%s: no frame carries fullyIdle or mainTrajectoryUpdate.status (1.2.x-only, spike-notes §11.5)", async (version) => {
    const server = await sim(version);
    const { raw, frames } = await framesOfTurn(server, "Say hello in one short sentence.");
    expect(frames.length).toBeGreaterThan(3);
    for (const text of raw) expect(text).not.toContain("fullyIdle");
    for (const frame of frames) {
      expect(Object.keys(frame.update).sort()).toEqual(["conversationId", "mainTrajectoryUpdate", "status", "trajectoryId"]);
      expect(Object.keys(frame.update.mainTrajectoryUpdate)).toEqual(["stepsUpdate"]);
    }
  });

  it("1.2: frames carry mainTrajectoryUpdate.status, and fullyIdle once nothing runs or waits (clients 1.2, spike-notes §10.5)", async () => {
    const server = await sim("1.2");
    const { frames } = await framesOfTurn(server, "Say hello in one short sentence.");
    for (const frame of frames) expect(frame.update.mainTrajectoryUpdate.status).toBe(frame.update.status);
    const running = frames.filter((f) => f.update.status === "CASCADE_RUN_STATUS_RUNNING");
    expect(running.length).toBeGreaterThan(0);
    for (const frame of running) expect(frame.update.fullyIdle).toBeUndefined();
    const last = frames.at(-1) as Json;
    expect(last.update.fullyIdle).toBe(true);
    expect(last.update.mainTrajectoryUpdate.fullyIdle).toBe(true);
  });

  it("GetConversationMetadata names the workspaces only from 1.1 on (spike-notes §3.2, §10.4)", async () => {
    for (const version of AGY_VERSIONS) {
      const server = await sim(version);
      const id = server.engine.activeConversationId;
      const res = await unary(server.tlsUrl, "GetConversationMetadata", { conversationId: id });
      expect(res.status).toBe(200);
      if (version === "1.0.10") expect(res.json).toEqual({ metadata: { rootConversationId: id } });
      else expect(res.json.metadata).toMatchObject({ rootConversationId: id, workspaceUris: ["file:///home/sim/project"] });
    }
  });

  it("GetCascadeTrajectory exists only from 1.1 on; agy 1.0.10's persona answers 404 like an unknown method (spike-notes §10.4)", async () => {
    for (const version of AGY_VERSIONS) {
      const server = await sim(version);
      const res = await unary(server.tlsUrl, "GetCascadeTrajectory", { cascadeId: server.engine.activeConversationId });
      expect([version, res.status]).toEqual([version, version === "1.0.10" ? 404 : 200]);
    }
  });

  it("1.0.10 drops initialStepsPageBounds as an unknown field and replays every step; 1.1 honours it (spike-notes §1.2, §11.6)", async () => {
    for (const [version, expected] of [
      ["1.0.10", [0, 1, 2, 3]],
      ["1.1", [2]],
    ] as const) {
      const server = await sim(version);
      const cascadeId = server.engine.activeConversationId;
      await sendTurn(server, cascadeId, "Say hello in one short sentence.");
      await waitForIdle(server, cascadeId);
      const reader = await openStream(server.tlsUrl, { conversationId: cascadeId, initialStepsPageBounds: { startIndex: 2, endIndexExclusive: 3 } });
      onTestFinished(() => reader.cancel());
      const first = await reader.waitForFrame();
      expect([version, first.update.mainTrajectoryUpdate.stepsUpdate.indices]).toEqual([version, expected]);
    }
  });
});

// ---------------------------------------------------------------------------
// Our client under each persona.

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

const textOf = (scenario: Scenario): string => ("text" in scenario.match ? scenario.match.text : "Tell me something I did not script");
const played = scenarios.filter((s) => !("regex" in s.match));

/**
 * The event log of one scenario turn, read by an attached session that
 * approves every gate (first option of a question), with what differs
 * between runs by design taken out: ids and hashes minted per run, times,
 * and the live text deltas.
 */
async function sessionLog(version: AgyVersion, scenario: Scenario): Promise<unknown[]> {
  const server = await startTestSim({ agyVersion: version, scenarios });
  onTestFinished(() => server.close());
  const session = await AgySession.attach({ url: server.tlsUrl, conversationId: server.engine.activeConversationId });
  onTestFinished(() => session.close());
  const log: MapperEvent[] = [];
  let turnStarted = false;
  const done = (async () => {
    for await (const event of session.events()) {
      log.push(event);
      if (event.type === "user_message") turnStarted = true;
      if (event.type === "interaction_requested") void answer(session, event);
      if (turnStarted && event.type === "status" && (event.status === "idle" || event.status === "failed")) return;
    }
  })();
  // The turn starts once the session follows the stream, so the events are the stream's, not a late snapshot's.
  await eventually(
    async () => server.openStreams(session.conversationId),
    (n) => n > 0,
    { what: `${version}: the session's stream` },
  );
  server.engine.tuiPort().submitTurn(textOf(scenario));
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${version} ${scenario.name}: no turn end within 15 s; saw ${log.map((e) => e.type).join(", ")}`)), 15_000);
  });
  try {
    await Promise.race([done, bound]);
  } finally {
    clearTimeout(timer);
  }
  return normalise(log);
}

async function answer(session: AgySession, event: Requested): Promise<void> {
  const result =
    event.request.kind === "question" ? await session.answer(event.interactionId, { optionIds: ["1"] }) : await session.approve(event.interactionId);
  if (result.result !== "delivered") throw new Error(`the answer to step ${event.stepIndex} was not delivered: ${JSON.stringify(result)}`);
}

const PER_RUN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
const PER_RUN_KEYS = new Set(["interactionId", "callId", "messageId", "agyToolCallId", "at", "timestamp"]);

function normalise(log: MapperEvent[]): unknown[] {
  return (
    log
      // Live text is split, and can even be skipped, by whether a frame or a probe's snapshot read a
      // planner first: timing, not the persona. The committed `message` carries the whole text.
      .filter((event) => event.type !== "message_delta" && event.type !== "reasoning_delta")
      .map(
        (event) =>
          JSON.parse(JSON.stringify(event, (key, value: unknown) => (PER_RUN_KEYS.has(key) ? "<per-run>" : value)).replace(PER_RUN, "<per-run>")) as unknown,
      )
  );
}

describe("our client under each persona", () => {
  it.each(played.map((s) => [s.name, s] as const))("%s: the session emits the same events under agy 1.0.10, 1.1 and 1.2", async (_name, scenario) => {
    const [base, ...others] = await Promise.all(AGY_VERSIONS.map((version) => sessionLog(version, scenario)));
    expect(base?.length).toBeGreaterThan(2);
    for (const [i, other] of others.entries()) expect([AGY_VERSIONS[i + 1], other]).toEqual([AGY_VERSIONS[i + 1], base]);
  });
});
