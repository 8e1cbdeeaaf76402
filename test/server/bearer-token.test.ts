import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBearerCheck, defaultTokenFile, loadBearerToken } from "../../src/server/bearer-token.js";

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("the bearer token", () => {
  it("is generated on first start into a file with mode 0600 in a 0700 directory, and reused after", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const tokenFile = join(dir, "conf", "agy-bridge", "token");
    const first = await loadBearerToken({ env: {}, tokenFile });
    expect(first.created).toBe(true);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "conf", "agy-bridge"))).mode & 0o777).toBe(0o700);
    expect((await readFile(tokenFile, "utf8")).trim()).toBe(first.token);
    const second = await loadBearerToken({ env: {}, tokenFile });
    expect(second).toEqual({ token: first.token, source: tokenFile, created: false });
  });

  it("takes AGY_BRIDGE_TOKEN over the file and refuses a short one", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "file-token-file-token-file-token\n", { mode: 0o600 });
    expect(await loadBearerToken({ env: { AGY_BRIDGE_TOKEN: "env-token-env-token-env" }, tokenFile })).toMatchObject({
      token: "env-token-env-token-env",
      source: "AGY_BRIDGE_TOKEN",
    });
    await expect(loadBearerToken({ env: { AGY_BRIDGE_TOKEN: "short" }, tokenFile })).rejects.toThrow(/too short/);
  });

  it("refuses an empty token file with a sentence that never shows its content", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "abc\n", { mode: 0o600 });
    await expect(loadBearerToken({ env: {}, tokenFile })).rejects.toThrow(/holds no usable token; delete it/);
  });

  it("refuses a token file other users can read, naming the fix", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "file-token-file-token-file-token\n", { mode: 0o644 });
    const failure = loadBearerToken({ env: {}, tokenFile });
    await expect(failure).rejects.toThrow(/can be read by other users \(mode 644\); run `chmod 600/);
    await expect(failure).rejects.not.toThrow(/file-token/);
  });

  it("refuses a token file owned by another user, even with mode 0600", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "planted-token-planted-token\n", { mode: 0o600 });
    await chown(tokenFile, 65534, 65534);
    const uid = process.getuid?.() ?? 0;
    const failure = loadBearerToken({ env: {}, tokenFile, uid });
    await expect(failure).rejects.toThrow(`belongs to another user (uid 65534, not ${uid})`);
    await expect(failure).rejects.not.toThrow(/planted-token/);
  });

  it("refuses a token file in a directory others can write, before reading it and before writing a new one", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const open = join(dir, "open");
    await mkdir(open);
    await chmod(open, 0o777);
    const tokenFile = join(open, "token");
    const uid = process.getuid?.() ?? 0;
    await expect(loadBearerToken({ env: {}, tokenFile, uid })).rejects.toThrow(
      /can be written by other users \(mode 777\), who could replace the token; run `chmod 700/,
    );
    await expect(stat(tokenFile)).rejects.toThrow(/ENOENT/);
    await writeFile(tokenFile, "file-token-file-token-file-token\n", { mode: 0o600 });
    await expect(loadBearerToken({ env: {}, tokenFile, uid })).rejects.toThrow(/can be written by other users/);
    await chmod(open, 0o700);
    expect((await loadBearerToken({ env: {}, tokenFile, uid })).token).toBe("file-token-file-token-file-token");
  });

  it("refuses a token file whose directory belongs to another user", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-token-"));
    const theirs = join(dir, "theirs");
    await mkdir(theirs, { mode: 0o755 });
    const tokenFile = join(theirs, "token");
    await writeFile(tokenFile, "file-token-file-token-file-token\n", { mode: 0o600 });
    await chown(theirs, 65534, 65534);
    await expect(loadBearerToken({ env: {}, tokenFile, uid: process.getuid?.() ?? 0 })).rejects.toThrow(/belongs to another user \(uid 65534\)/);
  });

  it("lives under XDG_CONFIG_HOME when set, else ~/.config", () => {
    expect(defaultTokenFile({ XDG_CONFIG_HOME: "/x/cfg" }, "/home/u")).toBe("/x/cfg/agy-bridge/token");
    expect(defaultTokenFile({}, "/home/u")).toBe("/home/u/.config/agy-bridge/token");
  });

  it("accepts only the exact token as a Bearer credential", () => {
    const check = createBearerCheck("s3cret-s3cret-s3cret");
    expect(check("Bearer s3cret-s3cret-s3cret")).toBe(true);
    expect(check("bearer s3cret-s3cret-s3cret")).toBe(true);
    expect(check("Bearer s3cret-s3cret-s3cre")).toBe(false);
    expect(check("Bearer s3cret-s3cret-s3cretX")).toBe(false);
    expect(check("Basic s3cret-s3cret-s3cret")).toBe(false);
    expect(check(undefined)).toBe(false);
    expect(check("Bearer ")).toBe(false);
  });
});
