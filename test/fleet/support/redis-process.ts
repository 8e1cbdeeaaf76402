/**
 * A private `redis-server` for one test: a free loopback port, its own
 * temporary directory (no dump file unless `appendonly`), killed by `stop`.
 * Never the machine's default server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** A new client of this server (closed by `stop`). */
  client(): Redis;
  /** Kills the server (SIGKILL: no final save). */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (with AOF, every write acknowledged before the kill is back). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

async function untilPing(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${log()}`);
    const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === "PONG") return;
    } catch {
      // not up yet
    } finally {
      probe.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within 10 s: ${log()}`);
}

export async function startRedis(options: { appendonly?: boolean } = {}): Promise<RedisProcess> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-redis-"));
  const port = await freePort();
  const clients: Redis[] = [];
  let child: ChildProcess | undefined;
  let output = "";
  const launch = async (): Promise<void> => {
    output = "";
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", options.appendonly === true ? "yes" : "no", "--appendfsync", "always", "--protected-mode", "yes"];
    const started = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    started.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    started.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child = started;
    await untilPing(port, started, () => output.slice(-2000));
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((r) => running.once("exit", r));
    running.kill("SIGKILL");
    await exited;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    client() {
      const client = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(500, n * 50) });
      client.on("error", () => undefined);
      clients.push(client);
      return client;
    },
    kill,
    start: launch,
    async stop() {
      for (const client of clients) client.disconnect();
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
