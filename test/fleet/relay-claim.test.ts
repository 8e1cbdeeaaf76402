import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COMMAND_GROUP, commandsStream } from "../../src/fleet/index.js";
import { startAnswerProxy, type AnswerProxy } from "./support/answer-proxy.js";
import { runRelayOnce, startRelayProcess, type RelayProcess } from "./support/relay-process.js";
import { startRelayWorld, type RelayWorld } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function world(): Promise<{ w: RelayWorld; proxy: AnswerProxy; dir: string }> {
  const w = await startRelayWorld();
  cleanups.push(() => w.close());
  const proxy = await startAnswerProxy(w.sim.plainUrl);
  cleanups.push(() => proxy.close());
  const dir = await mkdtemp(join(tmpdir(), "agyb-relay-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { w, proxy, dir };
}

async function relay(w: RelayWorld, proxy: AnswerProxy, dir: string): Promise<RelayProcess> {
  const started = await startRelayProcess(
    ["--redis", w.redis.url, "--host", w.host, "--claim-idle", "400", "--url", proxy.url, "--conversation", w.conversationId],
    dir,
  );
  cleanups.push(() => started.kill());
  return started;
}

async function pending(w: RelayWorld): Promise<[string, string, number, number][]> {
  return (await w.bot.xpending(commandsStream(w.host), COMMAND_GROUP, "-", "+", 10)) as [string, string, number, number][];
}

describe("a relay killed in the middle of a command", { timeout: 60_000 }, () => {
  it("logs in as an ACL user and prints its ready line with the Redis URL without credentials", async () => {
    const { w, proxy, dir } = await world();
    // The user docs/fleet.md tells an operator to create: agy:* keys only, no admin commands.
    await w.bot.acl(
      "SETUSER",
      "relay-user",
      "on",
      ">s3cret",
      "~agy:*",
      "&*",
      "-@all",
      "+@read",
      "+@write",
      "+@stream",
      "+@scripting",
      "+ping",
      "+hello",
      "+auth",
    );
    const started = await startRelayProcess(
      ["--redis", `redis://relay-user@127.0.0.1:${w.redis.port}`, "--host", w.host, "--url", proxy.url, "--conversation", w.conversationId],
      dir,
      { AGY_BRIDGE_REDIS_PASSWORD: "s3cret" },
    );
    cleanups.push(() => started.kill());
    expect(started.ready).toEqual({ relay: "ready", host: w.host, redis: `redis://127.0.0.1:${w.redis.port}` });
    // It publishes and takes commands as that user.
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    await w.waitForEvent((event) => event["type"] === "interaction_requested", `the gate, published by the ACL user (relay stderr: ${started.stderr()})`);
    await w.bot.xadd(
      `agy:commands:${w.host}`,
      "*",
      "requestId",
      "acl-1",
      "type",
      "interrupt",
      "conversationId",
      w.conversationId,
      "body",
      "{}",
      "principal",
      "bot",
    );
    expect((await w.waitForResult("acl-1")).result).toMatchObject({ result: "denied" });
    expect(await started.stop()).toBe(0);
    expect(started.stderr()).not.toContain("s3cret");
  });

  it("refuses to start with a wrong password, saying so without the password", async () => {
    const { w, proxy, dir } = await world();
    await w.bot.acl("SETUSER", "relay-user", "on", ">s3cret", "~agy:*", "&*", "+@all");
    const run = await runRelayOnce(
      ["--redis", `redis://relay-user:wr0ng@127.0.0.1:${w.redis.port}`, "--host", w.host, "--url", proxy.url, "--conversation", w.conversationId],
      dir,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+\/? \(.*\); check the URL, that Redis runs, and the ACL user and password/);
    expect(run.stderr).not.toContain("wr0ng");
  });

  it("leaves it pending; the restarted relay claims it, agy receives exactly one answer and the result says already_resolved", async () => {
    const { w, proxy, dir } = await world();
    const first = await relay(w, proxy, dir);
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const gate = JSON.parse((await w.waitForEvent((event) => event["type"] === "interaction_requested", "the published gate")).fields["event"]!) as {
      interactionId: string;
      stepIndex: number;
    };

    // agy takes the answer, but the relay never hears back: it dies after reading, before acknowledging.
    proxy.holdAnswers(true);
    await w.bot.xadd(
      commandsStream(w.host),
      "*",
      "requestId",
      "kill-1",
      "type",
      "approve",
      "conversationId",
      w.conversationId,
      "interactionId",
      gate.interactionId,
      "body",
      "{}",
      "principal",
      "approval-bot",
    );
    await until(() => (proxy.answers === 1 ? true : undefined), "agy to receive the approval");
    const held = await pending(w);
    expect(held).toHaveLength(1);
    await first.kill();
    proxy.holdAnswers(false);

    const second = await relay(w, proxy, dir);
    const { result, entry } = await w.waitForResult("kill-1");
    expect(result).toEqual({ interactionId: gate.interactionId, result: "already_resolved", stepIndex: gate.stepIndex, claimed: true });
    expect(entry.fields["commandId"]).toBe(held[0]![0]);
    await until(async () => ((await pending(w)).length === 0 ? true : undefined), "the claimed command's acknowledgement");
    expect(proxy.answers).toBe(1);
    const step = w.sim.engine.conversation(w.conversationId)!.steps[gate.stepIndex] as { completedInteractions?: unknown[] };
    expect(step.completedInteractions).toHaveLength(1);
    // The audit log names who decided.
    expect(await second.stop()).toBe(0);
    const audit = await readFile(join(dir, "agy-bridge", "audit.jsonl"), "utf8");
    expect(audit).toContain('"decidedBy":"relay:approval-bot"');
  });

  it("claims a command read but not yet sent to agy, and delivers it once", async () => {
    const { w, proxy, dir } = await world();
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const first = await relay(w, proxy, dir);
    const gate = JSON.parse((await w.waitForEvent((event) => event["type"] === "interaction_requested", "the published gate")).fields["event"]!) as {
      interactionId: string;
      stepIndex: number;
    };
    // Every unary call of agy is slow: the relay reads the command and is still re-reading the step when it dies.
    w.sim.setFaults({ unaryDelayMs: 60_000 });
    await w.bot.xadd(
      commandsStream(w.host),
      "*",
      "requestId",
      "kill-2",
      "type",
      "approve",
      "conversationId",
      w.conversationId,
      "interactionId",
      gate.interactionId,
      "body",
      "{}",
      "principal",
      "approval-bot",
    );
    await until(async () => ((await pending(w)).length === 1 ? true : undefined), "the relay to read the command");
    await first.kill();
    w.sim.setFaults({});
    expect(proxy.answers).toBe(0);

    await relay(w, proxy, dir);
    const { result } = await w.waitForResult("kill-2");
    expect(result).toEqual({ interactionId: gate.interactionId, result: "delivered", stepIndex: gate.stepIndex, claimed: true });
    expect(proxy.answers).toBe(1);
  });
});
