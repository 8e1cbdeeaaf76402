/**
 * `agy-bridge serve`'s own wiring of the checks: the flags and the token
 * file's owner, as a subprocess.
 */
import { spawn } from "node:child_process";
import { chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { rawRequest } from "./support/raw-http.js";
import { BIN, ROOT, startServeProcess, type ServeProcess } from "./support/serve-process.js";

let serve: ServeProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  await serve?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  serve = undefined;
  dir = undefined;
});

describe("agy-bridge serve's checks", { timeout: 60_000 }, () => {
  it("answers a Host named with --allow-host (repeatable) and refuses any other name", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-flags-"));
    serve = await startServeProcess({ configHome: dir, args: ["--refresh-ms", "60000", "--allow-host", "box.test", "--allow-host", "tunnel.test"] });
    const port = Number(new URL(serve.url).port);
    const get = (host: string) => rawRequest(port, `GET /v1/sessions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${serve!.token}`);
    expect((await get("box.test:7878")).status).toBe(200);
    expect((await get("tunnel.test")).status).toBe(200);
    expect((await get(`127.0.0.1:${port}`)).status).toBe(200);
    expect((await get("evil.test")).status).toBe(403);
  });

  it("refuses to start with a token file that belongs to another user", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-flags-"));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "planted-token-planted-token\n", { mode: 0o600 });
    await chown(tokenFile, 65534, 65534);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env["AGY_BRIDGE_TOKEN"];
    const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--token-file", tokenFile], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`serve did not exit within 30 s; stderr: ${stderr}`));
      }, 30_000);
      child.once("exit", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/belongs to another user \(uid 65534/);
    expect(stderr).not.toContain("planted-token");
  });
});
