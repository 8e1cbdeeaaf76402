/**
 * The API's bearer token: `AGY_BRIDGE_TOKEN` when set, else a token file,
 * generated on first start (32 random bytes, base64url) with mode 0600 in a
 * 0700 directory. The token is compared in constant time and never logged.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AgyBridgeError } from "../errors.js";

export interface LoadedToken {
  token: string;
  /** Where it came from: the file path, or `AGY_BRIDGE_TOKEN`. */
  source: string;
  /** True when this start wrote a new token file. */
  created: boolean;
}

/** `$XDG_CONFIG_HOME/agy-bridge/token`, else `~/.config/agy-bridge/token`. */
export function defaultTokenFile(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const base = env["XDG_CONFIG_HOME"] !== undefined && env["XDG_CONFIG_HOME"] !== "" ? env["XDG_CONFIG_HOME"] : join(home, ".config");
  return join(base, "agy-bridge", "token");
}

const MIN_TOKEN_LENGTH = 16;

export async function loadBearerToken(options: {
  env: Readonly<Record<string, string | undefined>>;
  tokenFile: string;
}): Promise<LoadedToken> {
  const fromEnv = options.env["AGY_BRIDGE_TOKEN"];
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < MIN_TOKEN_LENGTH) {
      throw new AgyBridgeError("invalid_argument", `AGY_BRIDGE_TOKEN is too short; use at least ${MIN_TOKEN_LENGTH} characters (32 random bytes, base64url, is the default)`);
    }
    return { token: fromEnv, source: "AGY_BRIDGE_TOKEN", created: false };
  }
  let text: string | undefined;
  try {
    text = await readFile(options.tokenFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new AgyBridgeError("invalid_argument", `cannot read the token file ${options.tokenFile} (${(error as NodeJS.ErrnoException).code ?? "error"}); fix its permissions or pass --token-file`, { cause: error });
    }
  }
  if (text !== undefined) {
    // Like ssh with a private key: a token others can read is no secret.
    const mode = (await stat(options.tokenFile)).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new AgyBridgeError("invalid_argument", `the token file ${options.tokenFile} can be read by other users (mode ${mode.toString(8)}); run \`chmod 600 ${options.tokenFile}\` or delete it to have a new one generated`);
    }
    const token = text.trim();
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new AgyBridgeError("invalid_argument", `the token file ${options.tokenFile} holds no usable token; delete it to have a new one generated`);
    }
    return { token, source: options.tokenFile, created: false };
  }
  const token = randomBytes(32).toString("base64url");
  await mkdir(dirname(options.tokenFile), { recursive: true, mode: 0o700 });
  await writeFile(options.tokenFile, `${token}\n`, { mode: 0o600, flag: "wx" });
  await chmod(options.tokenFile, 0o600);
  return { token, source: options.tokenFile, created: true };
}

/** Constant-time check of an `Authorization` header against the token. */
export function createBearerCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = createHash("sha256").update(token).digest();
  return (authorization) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? "");
    // Hashing first gives both sides one length, so the comparison time says nothing.
    const given = createHash("sha256").update(match?.[1] ?? "").digest();
    return timingSafeEqual(given, expected) && match !== null;
  };
}

export interface FailureLimiter {
  /** True when `address` has failed too often recently and must get 429. */
  blocked(address: string): boolean;
  fail(address: string): void;
}

/** Counts failed authentications per address in a sliding window. */
export function createFailureLimiter(options: { maxFailures?: number; windowMs?: number; now?: () => number } = {}): FailureLimiter {
  const max = options.maxFailures ?? 10;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const failures = new Map<string, number[]>();
  const recent = (address: string): number[] => {
    const cutoff = now() - windowMs;
    const kept = (failures.get(address) ?? []).filter((t) => t > cutoff);
    if (kept.length === 0) failures.delete(address);
    else failures.set(address, kept);
    return kept;
  };
  return {
    blocked: (address) => recent(address).length >= max,
    fail(address) {
      const kept = recent(address);
      kept.push(now());
      failures.set(address, kept);
      // Bounded: a flood of addresses cannot grow the map without end.
      if (failures.size > 10_000) failures.delete(failures.keys().next().value as string);
    },
  };
}
