/**
 * The least-privilege ACL users of docs/fleet.md, as written there: the test
 * reads the page's `redis-acl` block and loads each line into a private
 * redis-server 7. A relay process, a `serve --redis` process and a bot (the
 * fleet client) then do their whole job as those users with no NOPERM, and
 * everything a role may not do — forge events or results, delete or trim
 * history, break the consumer group, flush or reconfigure the server, write
 * another host's streams — is refused with NOPERM.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createFleetClient } from "../../src/fleet/index.js";
import { startSimServer } from "../../src/sim/index.js";
import { startServeProcess } from "../server/support/serve-process.js";
import { startRedis, type RedisProcess } from "./support/redis-process.js";
import { startRelayProcess } from "./support/relay-process.js";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
const HOST = "build-07";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** The `user …` lines of the page's one `redis-acl` block, with each password replaced by the test's own. */
async function documentedUsers(): Promise<Map<string, string[]>> {
  const page = await readFile(join(ROOT, "docs/fleet.md"), "utf8");
  const blocks = [...page.matchAll(/^```redis-acl\n([\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) throw new Error(`docs/fleet.md should have one \`\`\`redis-acl block, has ${blocks.length}`);
  const users = new Map<string, string[]>();
  for (const line of blocks[0]![1]!.split("\n")) {
    if (line.trim() === "") continue;
    const [word, name, ...rules] = line.trim().split(/\s+/);
    if (word !== "user" || name === undefined) throw new Error(`not an ACL user line: ${line}`);
    users.set(
      name,
      rules.map((rule) => (rule.startsWith(">") ? `>pw-${name}` : rule)),
    );
  }
  return users;
}

function as(redis: RedisProcess, user: string): Redis {
  const client = new Redis({
    host: "127.0.0.1",
    port: redis.port,
    username: user,
    password: `pw-${user}`,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: true,
  });
  client.on("error", () => undefined);
  cleanups.push(async () => client.disconnect());
  return client;
}

/** The error text of a command that must fail (a success fails the test, saying which). */
async function refusal(what: string, run: () => Promise<unknown>): Promise<string> {
  try {
    const reply = await run();
    return `ALLOWED (${what} answered ${JSON.stringify(reply)})`;
  } catch (error) {
    return (error as Error).message;
  }
}

describe("the fleet's least-privilege ACL users (docs/fleet.md)", { timeout: 180_000 }, () => {
  it("let the relay, serve and a bot do their whole job, and refuse with NOPERM what each role may not do", async () => {
    const users = await documentedUsers();
    expect([...users.keys()]).toEqual([`relay-${HOST}`, "approval-bot", "serve-fleet", "dashboard"]);
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const admin = redis.client();
    for (const [name, rules] of users) await admin.call("ACL", "SETUSER", name, "reset", ...rules);

    const sim = await startSimServer({ speed: 0.05 });
    cleanups.push(() => sim.close());
    const conversationId = sim.engine.activeConversationId;
    const dir = await mkdtemp(join(tmpdir(), "agyb-fleet-acl-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));

    // The relay: publishes, keeps the index, takes commands (and claims, every 150 ms).
    const relay = await startRelayProcess(
      [
        "--redis",
        `redis://relay-${HOST}@127.0.0.1:${redis.port}`,
        "--host",
        HOST,
        "--claim-idle",
        "300",
        "--url",
        sim.plainUrl,
        "--conversation",
        conversationId,
      ],
      dir,
      { AGY_BRIDGE_REDIS_PASSWORD: `pw-relay-${HOST}` },
    );
    cleanups.push(() => relay.stop());

    // serve --redis: lists the fleet, serves the events, sends the page's answer as a command.
    const serve = await startServeProcess({
      configHome: dir,
      args: ["--redis", `redis://serve-fleet:pw-serve-fleet@127.0.0.1:${redis.port}`, "--refresh-ms", "200"],
    });
    cleanups.push(() => serve.stop());
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${serve.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${serve.token}`, "content-type": "application/json", "x-agy-bridge-client": "page" },
      });
    const listed = await until(
      async () => {
        const { sessions } = (await (await call("/v1/sessions")).json()) as { sessions: { conversationId: string; host?: string }[] };
        return sessions.find((s) => s.conversationId === conversationId);
      },
      "the relay's session on serve",
      { ms: 30_000, seen: () => `relay: ${relay.stderr()} serve: ${serve.stderr()}` },
    );
    expect(listed.host).toBe(HOST);

    // The bot follows the conversation through the fleet client.
    const bot = createFleetClient({ redis: as(redis, "approval-bot"), blockMs: 100 });
    expect((await bot.sessions()).map((s) => `${s.host}/${s.conversationId}`)).toContain(`${HOST}/${conversationId}`);
    const follow = new AbortController();
    cleanups.push(async () => follow.abort());
    const seen: string[] = [];
    const reading = (async () => {
      for await (const { event } of bot.events(HOST, conversationId, { signal: follow.signal })) seen.push(event.type);
    })();
    reading.catch(() => undefined);

    sim.engine.tuiPort().submitTurn("Run pwd");
    const pending = await until(
      async () => {
        const body = (await (await call(`/v1/sessions/${conversationId}/pending`)).json()) as { pending: { interactionId: string; stepIndex: number }[] };
        return body.pending[0];
      },
      "the gate on serve",
      { ms: 30_000 },
    );
    const approved = await call(`/v1/sessions/${conversationId}/interactions/${pending.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(approved.status, await approved.clone().text()).toBe(200);
    expect(await approved.json()).toMatchObject({ result: "delivered", stepIndex: pending.stepIndex });
    // agy echoes the answer when the approved command has run (the step's DONE), not when the answer is taken.
    const echoes = await until(
      () => {
        const step = sim.engine.conversation(conversationId)?.steps[pending.stepIndex] as { completedInteractions?: unknown[] } | undefined;
        return step?.completedInteractions;
      },
      "the approved step's answer echo",
      { ms: 30_000 },
    );
    expect(echoes).toHaveLength(1);
    await until(() => seen.includes("interaction_resolved") || undefined, "the bot to read the resolution", { ms: 30_000, seen: () => seen.join(" ") });

    // The bot's own command, its result, and the same request id again.
    const first = await bot.command(HOST, { type: "interrupt", conversationId, principal: "approval-bot", requestId: "acl-r1" }, { timeoutMs: 20_000 });
    expect(["idle", "cancelled", "denied"]).toContain(first.result.result);
    const again = await bot.command(HOST, { type: "interrupt", conversationId, principal: "approval-bot", requestId: "acl-r1" }, { timeoutMs: 20_000 });
    expect(again.result).toMatchObject({ result: "duplicate", firstCommandId: first.commandId });
    expect(await bot.newest(HOST, conversationId)).toMatch(/^\d+-\d+$/);
    expect((await bot.history(HOST, conversationId)).length).toBeGreaterThan(3);

    // A dashboard reads and never acts.
    const dashboard = createFleetClient({ redis: as(redis, "dashboard"), blockMs: 100 });
    expect((await dashboard.history(HOST, conversationId)).length).toBeGreaterThan(3);

    const events = `agy:events:${HOST}:${conversationId}`;
    const commands = `agy:commands:${HOST}`;
    const forbidden = async (user: string): Promise<Record<string, string>> => {
      const r = as(redis, user);
      const tries: Record<string, () => Promise<unknown>> = {
        "XADD an event": () => r.xadd(events, "*", "key", "forged", "type", "user_message", "event", "{}"),
        "XADD an index entry": () =>
          r.xadd("agy:sessions", "*", "type", "session.detached", "host", HOST, "conversationId", conversationId, "state", "gone", "time", "now"),
        "XADD a result": () => r.xadd(`agy:results:${HOST}`, "*", "requestId", "x", "commandId", "1-0", "result", "{}"),
        "XRANGE the commands": () => r.xrange(commands, "-", "+"),
        XDEL: () => r.xdel(events, "0-1"),
        XTRIM: () => r.xtrim(events, "MAXLEN", 0),
        "XGROUP DESTROY": () => r.xgroup("DESTROY", commands, "agy-relay"),
        "XGROUP SETID": () => r.xgroup("SETID", commands, "agy-relay", "$"),
        DEL: () => r.del(events),
        FLUSHALL: () => r.flushall(),
        CONFIG: () => r.config("GET", "*"),
        EVAL: () => r.eval("return 1", 0),
      };
      const out: Record<string, string> = {};
      for (const [what, run] of Object.entries(tries)) out[what] = await refusal(what, run);
      return out;
    };
    for (const user of ["approval-bot", "serve-fleet", "dashboard"]) {
      const refused = await forbidden(user);
      for (const [what, message] of Object.entries(refused)) expect(`${user} ${what}: ${message}`).toMatch(new RegExp(`^${user} ${what}: NOPERM`));
    }
    const dashboardCommand = await refusal("XADD a command", () =>
      as(redis, "dashboard").xadd(
        commands,
        "*",
        "requestId",
        "d1",
        "type",
        "interrupt",
        "conversationId",
        conversationId,
        "body",
        "{}",
        "principal",
        "dashboard",
      ),
    );
    expect(dashboardCommand).toMatch(/^NOPERM/);

    const relayUser = as(redis, `relay-${HOST}`);
    const relayTries: Record<string, () => Promise<unknown>> = {
      "XADD to another host's events": () => relayUser.xadd(`agy:events:other-host:${conversationId}`, "*", "key", "k", "type", "x", "event", "{}"),
      "XADD to another host's results": () => relayUser.xadd("agy:results:other-host", "*", "requestId", "x"),
      "XRANGE another host's commands": () => relayUser.xrange("agy:commands:other-host", "-", "+"),
      "XRANGE the index": () => relayUser.xrange("agy:sessions", "-", "+"),
      XDEL: () => relayUser.xdel(events, "0-1"),
      XTRIM: () => relayUser.xtrim(events, "MAXLEN", 0),
      "XGROUP DESTROY": () => relayUser.xgroup("DESTROY", commands, "agy-relay"),
      DEL: () => relayUser.del(events),
      FLUSHALL: () => relayUser.flushall(),
      CONFIG: () => relayUser.config("GET", "*"),
    };
    for (const [what, run] of Object.entries(relayTries)) expect(`relay ${what}: ${await refusal(what, run)}`).toMatch(new RegExp(`^relay ${what}: NOPERM`));
    // A script runs with the relay's own rights: what it may not do, it may not do from Lua either.
    expect(await refusal("EVAL FLUSHALL", () => relayUser.eval("return redis.call('FLUSHALL')", 0))).toMatch(/can't run this command|NOPERM/);
    expect(await refusal("EVAL XDEL", () => relayUser.eval("return redis.call('XDEL', KEYS[1], '0-1')", 1, events))).toMatch(/can't run this command|NOPERM/);

    // Nothing refused while they did their job, and the history is whole.
    expect(await admin.xlen(events)).toBeGreaterThan(3);
    expect(`${relay.stderr()}\n${serve.stderr()}`).not.toMatch(/NOPERM|Skipping the ready check/);
  });
});
