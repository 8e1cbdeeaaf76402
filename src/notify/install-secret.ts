/**
 * Secrets made once per install and kept in serve's config directory, mode 0600:
 * the webhook secret and the VAPID key pair. A file that others can read is
 * refused rather than used (its secret may be known), with the command that
 * fixes it.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AgyBridgeError } from "../errors.js";

export interface InstallSecret {
  text: string;
  /** True when this call generated it (say so once, where the person sees it). */
  created: boolean;
}

/** Reads `path`, or writes `make()` to it (0600, its directory 0700) when it does not exist. */
export async function loadOrCreateSecret(path: string, make: () => string): Promise<InstallSecret> {
  const existing = await readPrivate(path);
  if (existing !== undefined) return { text: existing, created: false };
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const text = make();
  try {
    await writeFile(path, `${text}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another serve made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      const theirs = await readPrivate(path);
      if (theirs !== undefined) return { text: theirs, created: false };
    }
    throw new AgyBridgeError(
      "invalid_argument",
      `cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? "error"}); check that its directory is yours and writable`,
      { cause: error },
    );
  }
  await chmod(path, 0o600);
  return { text, created: true };
}

/** A 32-byte random secret, base64url. */
export function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The trimmed contents of a secret file given on the command line (e.g. `--notify-webhook-secret-file`). */
export async function readSecretFile(path: string, what: string): Promise<string> {
  let text: string;
  try {
    text = (await readFile(path, "utf8")).trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AgyBridgeError("invalid_argument", `the ${what} file ${path} ${code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "error"})`}`, {
      cause: error,
    });
  }
  if (text === "") throw new AgyBridgeError("invalid_argument", `the ${what} file ${path} is empty; put the secret in it`);
  return text;
}

async function readPrivate(path: string): Promise<string | undefined> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new AgyBridgeError("invalid_argument", `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`, { cause: error });
  }
  const mode = info.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new AgyBridgeError(
      "invalid_argument",
      `${path} can be read by other users (mode ${mode.toString(8)}); run \`chmod 600 ${path}\`, or delete it to have a new one generated`,
    );
  }
  const text = (await readFile(path, "utf8")).trim();
  if (text === "") throw new AgyBridgeError("invalid_argument", `${path} is empty; delete it to have a new one generated`);
  return text;
}
