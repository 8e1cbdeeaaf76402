/**
 * The chaos suite, a handful of seeds (`npm run chaos -- --runs 100` runs a
 * hundred): each seed's session, played through the fault-injecting proxy,
 * gives the event log of its clean run, every answer lands once on its own
 * step, nothing hangs, nothing leaks. Plus the parts the verdict rests on:
 * the plan, the proxy's faults, the normalisation and the shrinking.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { planFor, isAgySide, label, type Fault } from "./fault-plan.js";
import { startChaosProxy } from "./chaos-proxy.js";
import { normalise, firstDifference } from "./normalise.js";
import { runSeed, shrinkFaults } from "./chaos-seed.js";
import { TURNS } from "./chaos-script.js";
import type { MapperEvent } from "../../src/mapper/index.js";

/** Together these seeds plan every kind of fault (see fault-plan.ts). */
const SEEDS = [3, 4, 6];

describe("the fault plan", () => {
  it("is the same for the same seed and differs between seeds", () => {
    expect(planFor(7, TURNS.length)).toEqual(planFor(7, TURNS.length));
    expect(planFor(7, TURNS.length)).not.toEqual(planFor(8, TURNS.length));
  });

  it("plans every kind of fault across the seeds npm test runs", () => {
    const kinds = new Set(SEEDS.flatMap((s) => planFor(s, TURNS.length).map((f) => f.kind)));
    expect([...kinds].sort()).toEqual(["clear_mid_turn", "cut", "drop", "http_500", "http_503", "restart", "split", "stall", "timeout_retry", "tui_race"]);
  });
});

/** A raw loopback HTTP server that records the bodies it got and answers `reply`. */
async function rawServer(reply: string): Promise<{ port: number; got: string[] }> {
  const got: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      got.push(Buffer.concat(parts).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, got };
}

async function proxyFor(port: number, faults: Fault[]) {
  const proxy = await startChaosProxy({ faults, targetPort: () => port, restartAgy: async () => undefined, position: () => 0 });
  onTestFinished(() => proxy.close());
  return proxy;
}

const post = (url: string, method: string, body: string) =>
  fetch(`${url}/exa.language_server_pb.LanguageServerService/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", connection: "close" },
    body,
  });

describe("the chaos proxy", () => {
  it("forwards a response written one byte at a time unchanged", async () => {
    const reply = JSON.stringify({ steps: Array.from({ length: 20 }, (_, i) => ({ i, text: "x".repeat(i) })) });
    const server = await rawServer(reply);
    const proxy = await proxyFor(server.port, [{ kind: "split", method: "GetCascadeTrajectorySteps", atStep: 0 }]);
    const res = await post(proxy.url, "GetCascadeTrajectorySteps", "{}");
    expect(await res.text()).toBe(reply);
    expect(proxy.fired.map((f) => f.kind)).toEqual(["split"]);
  });

  it("answers 503 itself, without agy ever seeing the request", async () => {
    const server = await rawServer("{}");
    const proxy = await proxyFor(server.port, [{ kind: "http_503", method: "Heartbeat", atStep: 0 }]);
    expect((await post(proxy.url, "Heartbeat", "{}")).status).toBe(503);
    expect(server.got).toEqual([]);
    expect((await post(proxy.url, "Heartbeat", '{"second":true}')).status).toBe(200);
    expect(server.got).toEqual(['{"second":true}']);
  });

  it("fires a fault by the conversation's position, on the first exchange of its method once the step is reached, however many came before", async () => {
    const server = await rawServer("{}");
    let position = 0;
    const proxy = await startChaosProxy({
      faults: [{ kind: "http_503", method: "GetCascadeTrajectorySteps", atStep: 3 }],
      targetPort: () => server.port,
      restartAgy: async () => undefined,
      position: () => position,
    });
    onTestFinished(() => proxy.close());
    for (let i = 0; i < 4; i++) expect((await post(proxy.url, "GetCascadeTrajectorySteps", "{}")).status).toBe(200);
    position = 3;
    expect((await post(proxy.url, "GetCascadeTrajectorySteps", "{}")).status).toBe(503);
    expect((await post(proxy.url, "GetCascadeTrajectorySteps", "{}")).status).toBe(200);
    expect(proxy.fired.map(label)).toEqual(["http_503(GetCascadeTrajectorySteps@step 3)"]);
  });

  it("cuts a short unary reply mid-response within its first chunk, so the fault fires whatever the reply's length", async () => {
    const server = await rawServer("{}");
    const proxy = await proxyFor(server.port, [{ kind: "cut", method: "HandleCascadeUserInteraction", atStep: 0, phase: "mid_response", afterBytes: 5000 }]);
    await expect(post(proxy.url, "HandleCascadeUserInteraction", "{}").then((r) => r.text())).rejects.toThrow();
    expect(proxy.fired.map((f) => f.kind)).toEqual(["cut"]);
  });

  it("loses the reply of a call agy received when it cuts after the request", async () => {
    const server = await rawServer("{}");
    const proxy = await proxyFor(server.port, [{ kind: "cut", method: "HandleCascadeUserInteraction", atStep: 0, phase: "after_request", afterBytes: 0 }]);
    await expect(post(proxy.url, "HandleCascadeUserInteraction", '{"answer":1}')).rejects.toThrow();
    expect(server.got).toEqual(['{"answer":1}']);
  });
});

describe("the verdict", () => {
  const event = (text: string, at: string): MapperEvent =>
    ({
      type: "message",
      conversationId: "0b7f2a10-1111-4222-8333-944445555666",
      trajectoryId: "t",
      stepIndex: 2,
      messageId: `agy_msg_${at}`,
      role: "assistant",
      text,
      failed: false,
    }) as MapperEvent;

  it("normalises only per-run ids and what depends on what was seen, so a changed text still differs", () => {
    const delta = {
      type: "message_delta",
      conversationId: "c",
      trajectoryId: "t",
      stepIndex: 2,
      messageId: "m",
      index: 0,
      text: "hel",
      replace: false,
      final: false,
    } as MapperEvent;
    expect(normalise([delta, event("hello", "a")])).toEqual(normalise([event("hello", "b")]));
    expect(firstDifference(normalise([event("hello", "a")]), normalise([event("hello!", "a")]))).toMatch(/^event 0: clean .*hello".* \/ faulted .*hello!"/);
  });

  it("shrinks a failing fault list to the faults that make it fail", async () => {
    const plan = planFor(1, TURNS.length);
    const [a, , c] = plan;
    const shortest = await shrinkFaults(plan, async (faults) => faults.includes(a!) && faults.includes(c!));
    expect(shortest).toEqual([a, c]);
  });
});

describe("chaos runs", () => {
  it("replays: the same seed twice fires the same faults and gives the same events", async () => {
    const first = await runSeed(4);
    const second = await runSeed(4);
    const fired = (r: typeof first) => r.outcome.fired.map(label).sort();
    expect(fired(first).length, "seed 4 plans faults on the wire").toBeGreaterThan(4);
    expect(fired(second)).toEqual(fired(first));
    // Every planned fault fires: where it fires is a step of the conversation, which every run reaches.
    expect(fired(first)).toEqual(first.planned.map(label).sort());
    expect(second.outcome.log).toEqual(first.outcome.log);
  }, 60_000);

  it.each(SEEDS)(
    "seed %i: the session's events equal the clean run's, every answer lands once on its step",
    async (seed) => {
      const result = await runSeed(seed);
      expect(result.problems, `seed ${seed}: replay with npm run chaos -- --seed ${seed}`).toEqual([]);
      expect(result.identical).toBe(true);
      // The run was not clean by accident: faults fired on the wire.
      expect(result.outcome.fired.filter((f) => !isAgySide(f)).length).toBeGreaterThan(0);
    },
    60_000,
  );
});
