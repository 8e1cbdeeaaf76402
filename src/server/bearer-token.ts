/**
 * The API's bearer token: `AGY_BRIDGE_TOKEN` when set, else a token file,
 * generated on first start (32 random bytes, base64url) with mode 0600 in a
 * 0700 directory. The token is compared in constant time and never logged.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, mkdir, open, stat, writeFile } from "node:fs/promises";
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
  /**
   * The user serve runs as (`process.getuid()`): the file and its directory
   * must belong to it (or root), like ssh's checks of a private key. Without
   * it ownership is not checked.
   */
  uid?: number;
}): Promise<LoadedToken> {
  const fromEnv = options.env["AGY_BRIDGE_TOKEN"];
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < MIN_TOKEN_LENGTH) {
      throw new AgyBridgeError(
        "invalid_argument",
        `AGY_BRIDGE_TOKEN is too short; use at least ${MIN_TOKEN_LENGTH} characters (32 random bytes, base64url, is the default)`,
      );
    }
    return { token: fromEnv, source: "AGY_BRIDGE_TOKEN", created: false };
  }
  const dir = dirname(options.tokenFile);
  const text = await readOwnFile(options.tokenFile, options.uid);
  if (text !== undefined) {
    await checkDirectory(dir, options.uid, options.tokenFile);
    const token = text.trim();
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new AgyBridgeError("invalid_argument", `the token file ${options.tokenFile} holds no usable token; delete it to have a new one generated`);
    }
    return { token, source: options.tokenFile, created: false };
  }
  const token = randomBytes(32).toString("base64url");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // An existing directory keeps its mode: a new token must not go where others could swap it.
  await checkDirectory(dir, options.uid, options.tokenFile);
  await writeFile(options.tokenFile, `${token}\n`, { mode: 0o600, flag: "wx" });
  await chmod(options.tokenFile, 0o600);
  return { token, source: options.tokenFile, created: true };
}

/**
 * The file's text, read through one descriptor so the checks and the read
 * see the same file; undefined when it does not exist. Refused when others
 * can read it (a token others can read is no secret) or it belongs to
 * another user (they chose its content).
 */
async function readOwnFile(path: string, uid: number | undefined): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new AgyBridgeError("invalid_argument", `cannot read the token file ${path} (${code ?? "error"}); fix its permissions or pass --token-file`, {
      cause: error,
    });
  }
  try {
    const info = await handle.stat();
    if (!info.isFile())
      throw new AgyBridgeError("invalid_argument", `the token file ${path} is not a regular file; delete it to have a new one generated, or pass --token-file`);
    const mode = info.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new AgyBridgeError(
        "invalid_argument",
        `the token file ${path} can be read by other users (mode ${mode.toString(8)}); run \`chmod 600 ${path}\` or delete it to have a new one generated`,
      );
    }
    if (uid !== undefined && info.uid !== uid) {
      throw new AgyBridgeError(
        "invalid_argument",
        `the token file ${path} belongs to another user (uid ${info.uid}, not ${uid}), who chose its token; delete it to have a new one generated, or pass --token-file with a file of your own`,
      );
    }
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** The token file's directory: others must not be able to replace the file in it. */
async function checkDirectory(dir: string, uid: number | undefined, tokenFile: string): Promise<void> {
  const info = await stat(dir);
  const mode = info.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    throw new AgyBridgeError(
      "invalid_argument",
      `the directory ${dir} of the token file ${tokenFile} can be written by other users (mode ${mode.toString(8)}), who could replace the token; run \`chmod 700 ${dir}\`, or pass --token-file with a path in a directory only you can write`,
    );
  }
  if (uid !== undefined && info.uid !== uid && info.uid !== 0) {
    throw new AgyBridgeError(
      "invalid_argument",
      `the directory ${dir} of the token file ${tokenFile} belongs to another user (uid ${info.uid}), who could replace the token; pass --token-file with a path in a directory of your own`,
    );
  }
}

/** Constant-time check of an `Authorization` header against the token. */
export function createBearerCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = createHash("sha256").update(token).digest();
  return (authorization) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? "");
    // Hashing first gives both sides one length, so the comparison time says nothing.
    const given = createHash("sha256")
      .update(match?.[1] ?? "")
      .digest();
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
