/**
 * `--redis URL` for the commands that use the fleet (`relay`, `serve`): the
 * URL checked, credentials from the URL or `AGY_BRIDGE_REDIS_PASSWORD` (never
 * printed), TLS for `rediss://`, reconnects with backoff, and one sentence
 * when Redis cannot be reached.
 */
import type { Redis } from "ioredis";
import { isLoopbackHost } from "../rpc/loopback.js";
import { UsageError } from "./args.js";
import type { CliIo } from "./command.js";
import { terminalText } from "./terminal-text.js";

/** The URL as it may be shown: no user name or password. */
export function shownRedisUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href;
}

/** Reads `--redis`; a {@link UsageError} (exit 2) names what is wrong without repeating the value. */
export function redisUrlOf(command: string, text: string | undefined): URL {
  if (text === undefined || text === "")
    throw new UsageError(`--redis URL is required (redis://host:port or rediss://host:port); run \`agy-bridge ${command} --help\``);
  if (!URL.canParse(text)) throw new UsageError("--redis does not parse as a URL; give redis://host:port or rediss://host:port");
  const url = new URL(text);
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") throw new UsageError("--redis must be a redis:// or rediss:// URL");
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,5}$/.test(db)) throw new UsageError("--redis names a database that is not a number; give redis://host:port/0 or leave the path out");
  return url;
}

export interface RedisConnection {
  redis: Redis;
  /** Closes the connection, politely when it is up. */
  close(): Promise<void>;
}

/** Connects (10 s bound); undefined after saying on stderr why it could not. */
export async function connectRedis(io: CliIo, command: string, url: URL): Promise<RedisConnection | undefined> {
  if (url.protocol === "redis:" && !isLoopbackHost(url.hostname)) {
    io.stderr.write(
      `agy-bridge ${command}: warning: the Redis connection is not encrypted and not loopback; anyone on the path can read events and inject commands — use rediss:// (docs/fleet.md)\n`,
    );
  }
  const { Redis } = await import("ioredis");
  const password = io.env["AGY_BRIDGE_REDIS_PASSWORD"];
  const db = url.pathname.replace(/^\//, "");
  const redis = new Redis({
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? 6379 : Number(url.port),
    ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password !== "" ? { password: decodeURIComponent(url.password) } : password !== undefined && password !== "" ? { password } : {}),
    ...(db === "" ? {} : { db: Number(db) }),
    ...(url.protocol === "rediss:" ? { tls: { servername: url.hostname } } : {}),
    lazyConnect: true,
    // Commands wait while Redis is away (callers bound their own queues); reconnect with backoff.
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(2000, 50 * 2 ** Math.min(times, 6)),
  });
  let lastError = "";
  let connected = false;
  redis.on("error", (error: Error) => {
    if (error.message === lastError) return;
    lastError = error.message;
    // Before the first connection the failure is said once, below.
    if (connected) io.stderr.write(`${terminalText(`agy-bridge ${command}: Redis: ${error.message}`)}\n`);
  });
  try {
    await Promise.race([redis.connect(), new Promise((_, reject) => setTimeout(() => reject(new Error("no answer within 10 s")), 10_000).unref())]);
  } catch (error) {
    const why = lastError !== "" ? lastError : (error as Error).message;
    io.stderr.write(
      `${terminalText(`agy-bridge ${command}: cannot reach Redis at ${shownRedisUrl(url)} (${why}); check the URL, that Redis runs, and the ACL user and password`)}\n`,
    );
    redis.disconnect();
    return undefined;
  }
  lastError = "";
  connected = true;
  return {
    redis,
    async close() {
      if (redis.status === "ready") await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}
