/**
 * One `agy-bridge serve` following 100 conversations of 1,000 steps each,
 * hosted by ONE simulator process (`sim --as-agy --populate 100,1000`), both
 * as real subprocesses found the way serve finds agy (discovery). Measured
 * from outside, in /proc: serve's RSS and CPU while idle, then the latency
 * from a GENERATING frame (read off the simulator by a raw stream reader in
 * this process: the event) to the matching `message_delta` at an SSE
 * subscriber, with 10 turns running at once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { EnvelopeDecoder, encodeJsonEnvelope, FLAG_DATA, FLAG_END_STREAM } from "../src/protocol/envelope.js";
import { createAgyRpcClient } from "../src/rpc/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(ROOT, "src", "cli", "bin.ts");
const TOKEN = "bench-fleet-token-0123456789abcdef";
const CSRF = "bench-fleet-csrf";
const SERVICE = "/exa.language_server_pb.LanguageServerService/";

export interface FleetResult {
  conversations: number;
  followed: number;
  idleRssMb: number;
  idleCpuPercent: number;
  idleSeconds: number;
  latenciesMs: number[];
  turns: number;
  fds: number;
}

export function firstLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${what} exited with ${code} before printing its address`)));
  });
}

export async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the comm.
  return Number(fields[11]) + Number(fields[12]);
}

export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function fdCount(pid: number): Promise<number> {
  const { readdir } = await import("node:fs/promises");
  return (await readdir(`/proc/${pid}/fd`)).length;
}

export async function until<T>(probe: () => Promise<T | undefined>, what: string, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A raw StreamAgentStateUpdates reader on its own connection: when each text
 * length of a GENERATING planner step of the new turn (step index at or
 * above `firstNewStep`) arrived, keyed `<stepIndex>:<length>` — the same key
 * the SSE side computes from `message_delta`, so a length of an older
 * message is never matched to the new one.
 */
export function rawStream(
  port: number,
  conversationId: string,
  firstNewStep: number,
  seen: Map<string, number>,
  from: { armed: boolean },
  csrfToken = CSRF,
): { destroy(): void } {
  const body = encodeJsonEnvelope(FLAG_DATA, { conversationId, subscriberId: `bench-raw-${conversationId}` });
  const decoder = new EnvelopeDecoder();
  const request = httpRequest({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: `${SERVICE}StreamAgentStateUpdates`,
    headers: { "x-codeium-csrf-token": csrfToken, "content-type": "application/connect+json", "content-length": body.byteLength },
  });
  request.on("response", (response) => {
    response.on("data", (chunk: Buffer) => {
      // The arrival time is taken before any decoding: decoding is the bench's cost, not serve's.
      const now = performance.now();
      for (const frame of decoder.push(chunk)) {
        // The stream's first frame replays the history: only frames after the turn was sent count.
        if (!from.armed || (frame.flags & FLAG_END_STREAM) !== 0) continue;
        const update = JSON.parse(new TextDecoder().decode(frame.payload)) as {
          update?: { mainTrajectoryUpdate?: { stepsUpdate?: { steps?: unknown[]; indices?: number[] } } };
        };
        const stepsUpdate = update.update?.mainTrajectoryUpdate?.stepsUpdate;
        (stepsUpdate?.steps ?? []).forEach((step, i) => {
          const s = step as { plannerResponse?: { modifiedResponse?: string }; metadata?: { sourceTrajectoryStepInfo?: { stepIndex?: number } } };
          const index = stepsUpdate?.indices?.[i] ?? s.metadata?.sourceTrajectoryStepInfo?.stepIndex;
          const text = s.plannerResponse?.modifiedResponse;
          if (index === undefined || index < firstNewStep || text === undefined) return;
          const key = `${index}:${text.length}`;
          if (!seen.has(key)) seen.set(key, now);
        });
      }
    });
    response.on("error", () => undefined);
  });
  request.on("error", () => undefined);
  request.end(Buffer.from(body));
  return { destroy: () => request.destroy() };
}

/** For each conversation, each key seen at the SSE subscriber minus the time the raw reader saw it leave agy (ms). */
export function pairLatencies(raw: readonly Map<string, number>[], viaSse: readonly Map<string, number>[]): number[] {
  const out: number[] = [];
  viaSse.forEach((seen, i) => {
    for (const [key, at] of seen) {
      const sent = raw[i]!.get(key);
      if (sent !== undefined) out.push(at - sent);
    }
  });
  return out;
}

/** An SSE subscriber: when each cumulative text length of the conversation's message deltas arrived. */
export async function sseStream(
  url: string,
  conversationId: string,
  seen: Map<string, number>,
  from: { armed: boolean },
  token = TOKEN,
): Promise<{ close(): void; readonly caughtUp: boolean }> {
  const controller = new AbortController();
  const response = await fetch(`${url}/v1/sessions/${conversationId}/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const lengths = new Map<string, number>();
  let caughtUp = false;
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const now = performance.now();
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        // A frame with an id: the history (or its resync snapshot) is through.
        if (frame.startsWith("id: ") || frame.includes("\nid: ")) caughtUp = true;
        if (!from.armed || !frame.includes("event: message_delta")) continue;
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (data === undefined) continue;
        const delta = JSON.parse(data) as { messageId: string; stepIndex: number; text: string; replace: boolean; final: boolean };
        const length = delta.replace ? delta.text.length : (lengths.get(delta.messageId) ?? 0) + delta.text.length;
        lengths.set(delta.messageId, length);
        const key = `${delta.stepIndex}:${length}`;
        if (!delta.final && !seen.has(key)) seen.set(key, now);
      }
    }
  })().catch(() => undefined);
  return {
    close: () => controller.abort(),
    get caughtUp() {
      return caughtUp;
    },
  };
}

export interface FleetOptions {
  conversations: number;
  steps: number;
  idleSeconds: number;
  turns: number;
  /** A built CLI (`dist/bin/agy-bridge.js`) to run serve from; default the sources through tsx (whose loader costs memory of its own). */
  builtBin?: string;
  /** serve's `--replay-window`; default serve's own. */
  replayWindow?: number;
  /** Called with serve's pid once the idle figures are taken (e.g. to ask it for a heap snapshot). */
  onIdle?: (pid: number) => Promise<void>;
}

export async function runServeFleet(options: FleetOptions): Promise<FleetResult> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-fleet-"));
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_STATE_HOME: join(dir, "state"),
    AGY_BRIDGE_CACHE_DIR: join(dir, "cache"),
    AGY_BRIDGE_TOKEN: TOKEN,
  };
  const children: ChildProcess[] = [];
  try {
    const sim = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        BIN,
        "sim",
        "--as-agy",
        "--headless",
        "--speed",
        "0.3",
        "--csrf-token",
        CSRF,
        "--populate",
        `${options.conversations},${options.steps}`,
      ],
      {
        env,
        cwd: ROOT,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    children.push(sim);
    const simInfo = JSON.parse(await firstLine(sim, "the simulator")) as { plainUrl: string };
    const client = createAgyRpcClient({ baseUrl: simInfo.plainUrl, csrfToken: CSRF });
    const summaries = async () =>
      ((await client.getAllCascadeTrajectories({})) as { trajectorySummaries?: Record<string, { stepCount?: number; status?: string }> }).trajectorySummaries ??
      {};
    const ours = Object.entries(await summaries())
      .filter(([, s]) => s.stepCount === options.steps)
      .map(([id]) => id);
    if (ours.length !== options.conversations)
      throw new Error(`bench: the simulator hosts ${ours.length} conversations of ${options.steps} steps, not ${options.conversations}`);

    const serveCommand = options.builtBin === undefined ? ["--import", "tsx", BIN] : [options.builtBin];
    const serve = spawn(
      process.execPath,
      [
        ...serveCommand,
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--json",
        // No -L: with a tmux server named, serve offers only agy in its panes, and this simulator runs in none.
        ...(options.replayWindow === undefined ? [] : ["--replay-window", String(options.replayWindow)]),
      ],
      {
        env,
        cwd: ROOT,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    children.push(serve);
    const { url } = JSON.parse(await firstLine(serve, "serve")) as { url: string };
    const api = async (path: string) =>
      (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<{ sessions: { conversationId: string }[] }>;
    const mine = new Set(ours);
    const followed = await until(
      async () => {
        const { sessions } = await api("/v1/sessions");
        const n = sessions.filter((s) => mine.has(s.conversationId)).length;
        return n >= Math.min(options.conversations, mine.size) ? n : undefined;
      },
      `serve to follow ${options.conversations} conversations`,
      300_000,
    );
    // Each session reads its history when it attaches: let that finish before idling is measured.
    await new Promise((r) => setTimeout(r, 10_000));
    const pid = serve.pid!;
    const ticksPerSecond = 100;
    const t0 = await cpuTicks(pid);
    const w0 = performance.now();
    await new Promise((r) => setTimeout(r, options.idleSeconds * 1000));
    const cpu = ((await cpuTicks(pid)) - t0) / ticksPerSecond / ((performance.now() - w0) / 1000);
    const idleRssMb = await rssMb(pid);
    await options.onIdle?.(pid);

    // 10 turns at once: raw readers on the simulator say when each text length was sent; SSE says when serve delivered it.
    const port = Number(new URL(simInfo.plainUrl).port);
    const targets = ours.slice(0, options.turns);
    const armed = { armed: false };
    const raw = targets.map(() => new Map<string, number>());
    const viaSse = targets.map(() => new Map<string, number>());
    const sockets = targets.map((id, i) => rawStream(port, id, options.steps, raw[i]!, armed));
    const subscribers = await Promise.all(targets.map((id, i) => sseStream(url, id, viaSse[i]!, armed)));
    // Subscribers that came in after the window dropped the start are resynchronised first: wait for that.
    await until(async () => (subscribers.every((s) => s.caughtUp) ? true : undefined), "the SSE subscribers to catch up", 120_000);
    await new Promise((r) => setTimeout(r, 1000));
    armed.armed = true;
    await Promise.all(
      targets.map((id) => client.sendUserCascadeMessage({ conversationId: id, text: "Write a long essay about latency", planModel: "MODEL_PLACEHOLDER_M20" })),
    );
    await until(
      async () => {
        const now = await summaries();
        return targets.every((id) => now[id]?.status === "CASCADE_RUN_STATUS_IDLE" && (now[id]?.stepCount ?? 0) > options.steps) ? true : undefined;
      },
      "the 10 turns to end",
      120_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    const fds = await fdCount(pid);
    const latenciesMs = pairLatencies(raw, viaSse);
    for (const s of sockets) s.destroy();
    for (const s of subscribers) s.close();
    await client.close();
    return {
      conversations: options.conversations,
      followed,
      idleRssMb,
      idleCpuPercent: cpu * 100,
      idleSeconds: options.idleSeconds,
      latenciesMs,
      turns: targets.length,
      fds,
    };
  } finally {
    for (const child of children.reverse()) child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
}
