/**
 * A fleet measured from outside (issue 36; docs/scale.md, "More than one
 * host"): `hosts` simulators, each playing agy (`sim --as-agy --headless
 * --populate`) in its own private tmux server as one host would run it; one
 * `agy-bridge relay` per host scoped to that tmux server (`-L`) publishing
 * every session to one private `redis-server`; one `serve --redis` in front of
 * all of them — every one a real process of the built CLI.
 *
 * Figures: serve's and each relay's RSS and CPU while idle (from /proc);
 * Redis memory per retained event entry (MEMORY USAGE of the event streams
 * over their length) with the MAXLEN that bounds it; the latency from a
 * GENERATING frame leaving a simulator (read by a raw stream reader in this
 * process) to the matching `message_delta` at an SSE subscriber of serve,
 * with `turns` turns running at once across the hosts; and the time from an
 * HTTP approve posted to serve until serve answers `delivered` — which it
 * does only after the host's relay has had agy accept the answer over RPC.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createAgyRpcClient, type AgyRpcClient } from "../src/rpc/index.js";
import { startRedis } from "../test/fleet/support/redis-process.js";
import { cpuTicks, firstLine, pairLatencies, rawStream, rssMb, sseStream, until } from "./serve-fleet.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const TOKEN = "bench-fleet-hosts-token-0123456789";
const CSRF = "bench-fleet-hosts-csrf-0123456789";
const TICKS_PER_SECOND = 100;

export interface FleetHostsOptions {
  hosts: number;
  sessionsPerHost: number;
  steps: number;
  idleSeconds: number;
  /** Turns running at once for the latency figure, spread over the hosts. */
  turns: number;
  /** Approvals posted one after another for the approve figure. */
  approvals: number;
  /** Each relay's `--max-len`. */
  maxLen: number;
  /** The built CLI (`dist/bin/agy-bridge.js`, the bundle package.json names as its bin). */
  bin: string;
  /** NODE_OPTIONS for the relays (docs/fleet.md suggests `--max-semi-space-size=2`); default none. */
  relayNodeOptions?: string;
}

export interface ProcessFigures {
  rssMb: number;
  cpuPercent: number;
}

export interface FleetHostsResult {
  sessions: number;
  /** Seconds from the relays starting to serve listing every session. */
  listedAfterSeconds: number;
  serve: ProcessFigures;
  relays: ProcessFigures[];
  redis: { entries: number; streamBytes: number; usedMemoryBytes: number; maxLen: number };
  /** redis-server's CPU, % of a core: over the idle window, and from the turns being sent to their end. */
  redisCpu: { idlePercent: number; turnsPercent: number };
  latenciesMs: number[];
  approveMs: number[];
}

interface Host {
  name: string;
  socket: string;
  plainUrl: string;
  client: AgyRpcClient;
  populated: string[];
  all: string[];
}

const exec = promisify(execFile);

function tmuxEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env["TMUX"];
  return env;
}

const tmux = (socket: string, args: readonly string[]) => exec("tmux", ["-L", socket, "-f", "/dev/null", ...args], { env: tmuxEnv(), timeout: 10_000 });

/** One host: the simulator playing agy, headless, in a pane of its own tmux server; its JSON line read off the pane. */
async function startHost(k: number, options: FleetHostsOptions, env: NodeJS.ProcessEnv): Promise<Host> {
  const socket = `agyb-fh-${process.pid}-${k}`;
  const argv = [process.execPath, options.bin, "sim", "--as-agy", "--headless", "--speed", "0.3", "--csrf-token", CSRF];
  argv.push("--populate", `${options.sessionsPerHost},${options.steps}`);
  const envArgs = ["XDG_STATE_HOME", "XDG_CONFIG_HOME", "AGY_BRIDGE_CACHE_DIR"].flatMap((name) => ["-e", `${name}=${env[name]}`]);
  await tmux(socket, ["new-session", "-d", "-s", "agy", "-x", "400", "-y", "50", "-c", ROOT, ...envArgs, ...argv]);
  const line = await until(
    async () => {
      const { stdout } = await tmux(socket, ["capture-pane", "-p", "-J", "-t", "agy:"]);
      return stdout.split("\n").find((l) => l.startsWith('{"conversationId"'));
    },
    `host ${k}'s simulator to print its address`,
    120_000,
  );
  const info = JSON.parse(line.trim()) as { plainUrl: string };
  const client = createAgyRpcClient({ baseUrl: info.plainUrl, csrfToken: CSRF });
  const summaries =
    ((await client.getAllCascadeTrajectories({})) as { trajectorySummaries?: Record<string, { stepCount?: number }> }).trajectorySummaries ?? {};
  const all = Object.keys(summaries);
  const populated = all.filter((id) => summaries[id]?.stepCount === options.steps);
  if (populated.length !== options.sessionsPerHost) throw new Error(`bench: host ${k} hosts ${populated.length} conversations of ${options.steps} steps`);
  return { name: `host${k}`, socket, plainUrl: info.plainUrl, client, populated, all };
}

/**
 * A process of the built CLI. Its stderr (a relay names each agy its scope
 * leaves out: ten hosts on one machine print a hundred such lines) is kept,
 * the last lines of it, and shown only when the process fails.
 */
function spawnCli(bin: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [bin, ...args], { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const tail: string[] = [];
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    for (const line of text.split("\n")) if (line !== "") tail.push(line);
    tail.splice(0, Math.max(0, tail.length - 20));
  });
  child.on("exit", (code) => {
    if (code !== null && code !== 0) process.stderr.write(`bench: agy-bridge ${args[0]} exited ${code}; its last lines:\n${tail.join("\n")}\n`);
  });
  return child;
}

async function figures(pids: readonly number[], seconds: number): Promise<ProcessFigures[]> {
  const t0 = await Promise.all(pids.map(cpuTicks));
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const t1 = await Promise.all(pids.map(cpuTicks));
  const wall = (performance.now() - w0) / 1000;
  const rss = await Promise.all(pids.map(rssMb));
  return pids.map((_, i) => ({ cpuPercent: ((t1[i]! - t0[i]!) / TICKS_PER_SECOND / wall) * 100, rssMb: rss[i]! }));
}

/** The first `interaction_requested` serve's SSE stream of one conversation carries after it is armed. */
async function firstGate(url: string, conversationId: string, signal: AbortSignal): Promise<string> {
  const response = await fetch(`${url}/v1/sessions/${conversationId}/events`, { headers: { authorization: `Bearer ${TOKEN}` }, signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let live = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`bench: the SSE stream of ${conversationId} ended before a gate`);
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (frame.includes("event: history_end")) live = true;
      if (!live || !frame.includes("event: interaction_requested")) continue;
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as { interactionId: string };
      await reader.cancel().catch(() => undefined);
      return data.interactionId;
    }
  }
}

async function redisFigures(redis: { client(): import("ioredis").Redis }): Promise<{ entries: number; streamBytes: number; usedMemoryBytes: number }> {
  const admin = redis.client();
  let cursor = "0";
  let entries = 0;
  let streamBytes = 0;
  do {
    const [next, keys] = await admin.scan(cursor, "MATCH", "agy:events:*", "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      entries += await admin.xlen(key);
      streamBytes += Number(await admin.call("MEMORY", "USAGE", key, "SAMPLES", "0"));
    }
  } while (cursor !== "0");
  const usedMemoryBytes = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))?.[1]);
  return { entries, streamBytes, usedMemoryBytes };
}

/** redis-server's own pid, as it reports it (`INFO server`), for its CPU from /proc. */
async function serverPid(redis: { client(): import("ioredis").Redis }): Promise<number> {
  const admin = redis.client();
  try {
    const pid = Number(/^process_id:(\d+)/m.exec(await admin.info("server"))?.[1]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error("bench: redis-server reported no process_id");
    return pid;
  } finally {
    admin.disconnect();
  }
}

async function totalLength(redis: { client(): import("ioredis").Redis }): Promise<number> {
  return (await redisFigures(redis)).entries;
}

export async function runFleetHosts(options: FleetHostsOptions): Promise<FleetHostsResult> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-fleet-hosts-"));
  const env: NodeJS.ProcessEnv = {
    ...tmuxEnv(),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_STATE_HOME: join(dir, "state"),
    AGY_BRIDGE_CACHE_DIR: join(dir, "cache"),
    AGY_BRIDGE_TOKEN: TOKEN,
  };
  const redis = await startRedis();
  const children: ChildProcess[] = [];
  const hosts: Host[] = [];
  try {
    for (let k = 0; k < options.hosts; k++) hosts.push(await startHost(k, options, env));
    const started = performance.now();
    const relays = await Promise.all(
      hosts.map(async (host) => {
        const relay = spawnCli(
          options.bin,
          ["relay", "--redis", redis.url, "--host", host.name, "-L", host.socket, "--json", "--max-len", String(options.maxLen)],
          {
            ...env,
            XDG_STATE_HOME: join(dir, `state-${host.name}`),
            ...(options.relayNodeOptions === undefined ? {} : { NODE_OPTIONS: options.relayNodeOptions }),
          },
        );
        children.push(relay);
        await firstLine(relay, `${host.name}'s relay`);
        return relay;
      }),
    );
    const serve = spawnCli(options.bin, ["serve", "--redis", redis.url, "--listen", "127.0.0.1:0", "--json"], env);
    children.push(serve);
    const { url } = JSON.parse(await firstLine(serve, "serve")) as { url: string };
    const expected = new Set(hosts.flatMap((h) => h.all));
    await until(
      async () => {
        const { sessions } = (await (await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
          sessions: { conversationId: string }[];
        };
        return sessions.filter((s) => expected.has(s.conversationId)).length === expected.size ? true : undefined;
      },
      `serve to list all ${expected.size} sessions of ${options.hosts} hosts`,
      900_000,
    );
    const listedAfterSeconds = (performance.now() - started) / 1000;
    // The relays publish each session's history as they attach: idle begins when the streams stop growing.
    let length = -1;
    await until(
      async () => {
        const now = await totalLength(redis);
        const still = now === length;
        length = now;
        return still ? true : undefined;
      },
      "the event streams to stop growing",
      600_000,
    );
    await new Promise((r) => setTimeout(r, 5000));
    const redisPid = await serverPid(redis);
    const measured = await figures([serve.pid!, ...relays.map((r) => r.pid!), redisPid], options.idleSeconds);
    const serveFigures = measured[0];
    const relayFigures = measured.slice(1, -1);
    const redisIdle = measured.at(-1)!;
    const redisNow = await redisFigures(redis);

    // Turns at once across the hosts: raw readers say when each text length left agy, SSE when serve delivered it.
    const targets = Array.from({ length: options.turns }, (_, i) => {
      const host = hosts[i % hosts.length]!;
      return { host, conversationId: host.populated[Math.floor(i / hosts.length)]! };
    });
    const armed = { armed: false };
    const raw = targets.map(() => new Map<string, number>());
    const viaSse = targets.map(() => new Map<string, number>());
    const sockets = targets.map((t, i) => rawStream(Number(new URL(t.host.plainUrl).port), t.conversationId, options.steps, raw[i]!, armed, CSRF));
    const subscribers = await Promise.all(targets.map((t, i) => sseStream(url, t.conversationId, viaSse[i]!, armed, TOKEN)));
    await until(async () => (subscribers.every((s) => s.caughtUp) ? true : undefined), "the SSE subscribers to catch up", 120_000);
    armed.armed = true;
    const turnsFrom = { ticks: await cpuTicks(redisPid), at: performance.now() };
    await Promise.all(
      targets.map((t) =>
        t.host.client.sendUserCascadeMessage({
          conversationId: t.conversationId,
          text: "Write a long essay about latency",
          planModel: "MODEL_PLACEHOLDER_M20",
        }),
      ),
    );
    await until(
      async () => {
        const done = await Promise.all(
          targets.map(async (t) => {
            const summaries = (
              (await t.host.client.getAllCascadeTrajectories({})) as {
                trajectorySummaries?: Record<string, { stepCount?: number; status?: string }>;
              }
            ).trajectorySummaries;
            const s = summaries?.[t.conversationId];
            return s?.status === "CASCADE_RUN_STATUS_IDLE" && (s.stepCount ?? 0) > options.steps;
          }),
        );
        return done.every(Boolean) ? true : undefined;
      },
      `the ${options.turns} turns to end`,
      300_000,
    );
    const turnsSeconds = (performance.now() - turnsFrom.at) / 1000;
    const turnsPercent = turnsSeconds > 0 ? (((await cpuTicks(redisPid)) - turnsFrom.ticks) / TICKS_PER_SECOND / turnsSeconds) * 100 : 0;
    await new Promise((r) => setTimeout(r, 2000));
    const latenciesMs = pairLatencies(raw, viaSse);
    for (const s of sockets) s.destroy();
    for (const s of subscribers) s.close();

    // Approvals one after another, each on a gate of its own conversation (ones the turns above did not use).
    const approveMs: number[] = [];
    const perHost = Math.ceil(options.turns / hosts.length);
    for (let i = 0; i < options.approvals; i++) {
      const host = hosts[i % hosts.length]!;
      const conversationId = host.populated[perHost + Math.floor(i / hosts.length)];
      if (conversationId === undefined) throw new Error(`bench: host ${host.name} has no conversation left for approval ${i + 1}`);
      const stop = new AbortController();
      const gate = firstGate(url, conversationId, AbortSignal.any([stop.signal, AbortSignal.timeout(120_000)]));
      // The subscriber is in before the turn that opens the gate is sent.
      await new Promise((r) => setTimeout(r, 200));
      await host.client.sendUserCascadeMessage({ conversationId, text: "Run pwd", planModel: "MODEL_PLACEHOLDER_M20" });
      const interactionId = await gate;
      stop.abort();
      const t0 = performance.now();
      const response = await fetch(`${url}/v1/sessions/${conversationId}/interactions/${interactionId}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ action: "approve" }),
      });
      const body = (await response.json()) as { result?: string };
      approveMs.push(performance.now() - t0);
      if (response.status !== 200 || body.result !== "delivered")
        throw new Error(`bench: approval ${i + 1} answered ${response.status} ${JSON.stringify(body)}`);
    }
    return {
      sessions: expected.size,
      listedAfterSeconds,
      serve: serveFigures!,
      relays: relayFigures,
      redis: { ...redisNow, maxLen: options.maxLen },
      redisCpu: { idlePercent: redisIdle.cpuPercent, turnsPercent },
      latenciesMs,
      approveMs,
    };
  } finally {
    for (const child of children.reverse()) child.kill("SIGTERM");
    await Promise.all(
      children.map((child) =>
        child.exitCode !== null || child.signalCode !== null
          ? undefined
          : new Promise<void>((resolve) => {
              const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
              child.once("exit", () => {
                clearTimeout(timer);
                resolve();
              });
            }),
      ),
    );
    for (const host of hosts) await host.client.close().catch(() => undefined);
    for (let k = 0; k < options.hosts; k++) await tmux(`agyb-fh-${process.pid}-${k}`, ["kill-server"]).catch(() => undefined);
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
