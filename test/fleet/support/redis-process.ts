/**
 * A private `redis-server` for one test: a free loopback port, its own
 * temporary directory (no dump file unless `appendonly`), killed by `stop`.
 * Never the machine's default server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface RedisProcess {
  readonly port: number;
  /** `redis://…`, or `rediss://…` with `tls`. */
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

/** A certificate (PEM) the server presents, trusted by the test's clients; the relay trusts it through NODE_EXTRA_CA_CERTS. */
export interface RedisTls {
  cert: string;
  key: string;
}

async function untilPing(port: number, child: ChildProcess, log: () => string, tls: RedisTls | undefined): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${log()}`);
    const probe = new Redis({
      port,
      host: "127.0.0.1",
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      ...(tls === undefined ? {} : { tls: { ca: tls.cert } }),
    });
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

export async function startRedis(options: { appendonly?: boolean; tls?: RedisTls } = {}): Promise<RedisProcess> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-redis-"));
  const { tls } = options;
  if (tls !== undefined) {
    await writeFile(join(dir, "server.crt"), tls.cert);
    await writeFile(join(dir, "server.key"), tls.key, { mode: 0o600 });
  }
  const port = await freePort();
  const clients: Redis[] = [];
  let child: ChildProcess | undefined;
  let output = "";
  const launch = async (): Promise<void> => {
    output = "";
    const listen =
      tls === undefined
        ? ["--port", String(port)]
        : [
            "--port",
            "0",
            "--tls-port",
            String(port),
            "--tls-cert-file",
            join(dir, "server.crt"),
            "--tls-key-file",
            join(dir, "server.key"),
            "--tls-ca-cert-file",
            join(dir, "server.crt"),
            "--tls-auth-clients",
            "no",
          ];
    const args = [
      ...listen,
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      options.appendonly === true ? "yes" : "no",
      "--appendfsync",
      "always",
      "--protected-mode",
      "yes",
    ];
    const started = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    started.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    started.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child = started;
    await untilPing(port, started, () => output.slice(-2000), tls);
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
    url: `${tls === undefined ? "redis" : "rediss"}://127.0.0.1:${port}`,
    client() {
      const client = new Redis({
        port,
        host: "127.0.0.1",
        maxRetriesPerRequest: null,
        retryStrategy: (n) => Math.min(500, n * 50),
        ...(tls === undefined ? {} : { tls: { ca: tls.cert } }),
      });
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
