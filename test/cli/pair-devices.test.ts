/**
 * `agy-bridge serve` prints a pairing link; `agy-bridge pair` asks it for a
 * new one (text and QR code); `agy-bridge devices` lists and revokes what
 * paired. serve runs as a real subprocess; pair and devices run in-process
 * against it. The bearer token appears in none of the links, logs or QR codes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import qrcode from "qrcode";
import { afterEach, describe, expect, it } from "vitest";
import { firstLine } from "../support/first-line.js";
import { main } from "../../src/cli/main.js";
import { captureIo, runMain } from "../support/cli-io.js";
import { BIN, ROOT } from "../server/support/serve-process.js";

interface Serve {
  child: ChildProcess;
  url: string;
  tokenFile: string;
  pairingUrl: string;
  stderr(): string;
}

let serve: Serve | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (serve !== undefined && serve.child.exitCode === null) {
    const exited = new Promise((r) => serve!.child.once("exit", r));
    serve.child.kill("SIGTERM");
    await exited;
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  serve = undefined;
  dir = undefined;
});

async function startServe(): Promise<Serve> {
  dir = await mkdtemp(join(tmpdir(), "agyb-pair-"));
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir };
  delete env["AGY_BRIDGE_TOKEN"];
  delete env["TMUX"];
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--json", "-L", `agyb-pair-none-${process.pid}`], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => (stderr += chunk));
  const line = await firstLine(child.stdout!, "agy-bridge serve", 30_000, () => `stderr: ${stderr}`);
  const started = JSON.parse(line) as { url: string; tokenFile: string; pairingUrl: string };
  serve = { child, ...started, stderr: () => stderr };
  return serve;
}

const envFor = (d: string) => ({ XDG_CONFIG_HOME: d, HOME: d });

async function exchange(url: string, code: string, name: string): Promise<{ deviceId: string; token: string }> {
  const res = await fetch(`${url}/v1/pairing`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code, name }) });
  expect(res.status).toBe(201);
  return (await res.json()) as { deviceId: string; token: string };
}

describe("pair and devices", { timeout: 60_000 }, () => {
  it("pairs from serve's start link and from `pair`'s QR link, lists both devices, and revokes one", async () => {
    const s = await startServe();
    const bearer = (await readFile(s.tokenFile, "utf8")).trim();
    expect(s.pairingUrl).toMatch(new RegExp(`^${s.url}/#/pair/[A-Za-z0-9_-]{22}$`));
    const fromStart = await exchange(s.url, s.pairingUrl.split("/#/pair/")[1]!, "laptop");

    const pair = await runMain(["pair", "--url", s.url], { env: envFor(dir!) });
    expect(pair.code, pair.stderr).toBe(0);
    const link = pair.stdout.trim().split("\n").at(-1)!;
    expect(link).toMatch(new RegExp(`^${s.url}/#/pair/[A-Za-z0-9_-]{22}$`));
    // The QR code printed is the link's, and only the link's; stdout is no terminal, so plain text: no escape codes.
    expect(pair.stdout).toBe(`${await qrcode.toString(link, { type: "utf8" })}\n${link}\n`);
    expect(pair.stdout).not.toMatch(/\u001b/);
    const fromQr = await exchange(s.url, link.split("/#/pair/")[1]!, "phone");
    // The phone and the laptop turn on notifications: each subscription is the device's.
    for (const [device, path] of [
      [fromQr, "phone"],
      [fromStart, "laptop"],
    ] as const) {
      const sub = await fetch(`${s.url}/v1/push/subscriptions`, {
        method: "POST",
        headers: { authorization: `Bearer ${device.token}`, "content-type": "application/json" },
        body: JSON.stringify({
          endpoint: `https://push.example/${path}`,
          expirationTime: null,
          keys: { p256dh: "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U", auth: "tBHItJI5svbpez7KI4CCXg" },
        }),
      });
      expect(sub.status).toBe(201);
    }

    const listed = await runMain(["devices", "--json"], { env: envFor(dir!) });
    expect(listed.code, listed.stderr).toBe(0);
    const { devices } = JSON.parse(listed.stdout) as { devices: { id: string; name: string }[] };
    expect(devices.map((d) => [d.id, d.name])).toEqual([
      [fromStart.deviceId, "laptop"],
      [fromQr.deviceId, "phone"],
    ]);
    const table = await runMain(["devices"], { env: envFor(dir!) });
    expect(table.stdout).toMatch(new RegExp(`^ID +NAME +PAIRED\\n${fromStart.deviceId}  laptop  .*\\n${fromQr.deviceId}  phone   .*\\n$`));
    expect((await stat(join(dir!, "agy-bridge", "devices.json"))).mode & 0o777).toBe(0o600);

    const revoke = await runMain(["devices", "--revoke", fromQr.deviceId], { env: envFor(dir!) });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stdout).toContain(`revoked ${fromQr.deviceId} (phone)`);
    expect(revoke.stdout).toContain("its 1 push subscription(s) were deleted");
    // Revoked: its push subscription is gone, the laptop's stays.
    const subscriptions = JSON.parse(await readFile(join(dir!, "agy-bridge", "push-subscriptions.json"), "utf8")) as Array<{
      endpoint: string;
      device: string;
    }>;
    expect(subscriptions.map((x) => [x.endpoint, x.device])).toEqual([["https://push.example/laptop", fromStart.deviceId]]);
    const refused = await fetch(`${s.url}/v1/sessions`, { headers: { authorization: `Bearer ${fromQr.token}` } });
    expect(refused.status).toBe(401);
    const kept = await fetch(`${s.url}/v1/sessions`, { headers: { authorization: `Bearer ${fromStart.token}` } });
    expect(kept.status).toBe(200);

    const everything = [
      s.pairingUrl,
      pair.stdout,
      pair.stderr,
      listed.stdout,
      table.stdout,
      revoke.stdout,
      s.stderr(),
      await readFile(join(dir!, "agy-bridge", "devices.json"), "utf8"),
    ].join("\n");
    expect(everything).not.toContain(bearer);
    for (const device of [fromStart, fromQr]) expect(everything).not.toContain(device.token);
  });

  it("prints the QR code in colour only on a terminal, and with --json only the link's JSON", async () => {
    const s = await startServe();
    const json = await runMain(["pair", "--url", s.url, "--json"], { env: envFor(dir!) });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe("");
    expect(json.stdout.endsWith("\n")).toBe(true);
    expect(json.stdout.trim().split("\n")).toHaveLength(1);
    const body = JSON.parse(json.stdout) as { url: string; expiresAt: string };
    expect(Object.keys(body)).toEqual(["url", "expiresAt"]);
    expect(body.url).toMatch(new RegExp(`^${s.url}/#/pair/[A-Za-z0-9_-]{22}$`));
    // On a terminal: the coloured (escape-coded) small QR code, as before.
    const { io, stdout } = captureIo(["pair", "--url", s.url], { env: envFor(dir!) });
    Object.assign(io.stdout, { isTTY: true });
    expect(await main(io)).toBe(0);
    const link = stdout().trim().split("\n").at(-1)!;
    expect(stdout()).toBe(`${await qrcode.toString(link, { type: "terminal", small: true })}\n${link}\n`);
  });

  it("prints the start link on stderr without --json, and never the token", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-pair-"));
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir };
    delete env["AGY_BRIDGE_TOKEN"];
    const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "-L", `agyb-pair-none-${process.pid}`], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    serve = { child, url: "", tokenFile: "", pairingUrl: "", stderr: () => "" };
    let stderr = "";
    child.stderr!.setEncoding("utf8");
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no pairing line within 30 s; stderr: ${stderr}`)), 30_000);
      child.stderr!.on("data", (chunk: string) => {
        stderr += chunk;
        const found = /^agy-bridge serve: pair a phone: .*$/m.exec(stderr);
        if (found !== null) {
          clearTimeout(timer);
          resolve(found[0]);
        }
      });
    });
    expect(line).toMatch(/open http:\/\/127\.0\.0\.1:\d+\/#\/pair\/[A-Za-z0-9_-]{22} \(one device, within 5 minutes\)/);
    const bearer = (await readFile(join(dir, "agy-bridge", "token"), "utf8")).trim();
    expect(stderr).not.toContain(bearer);
  });

  it("says what to do when no device has the id, or serve is not running", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-pair-"));
    const revoke = await runMain(["devices", "--revoke", "abc"], { env: envFor(dir) });
    expect(revoke).toMatchObject({ code: 1, stderr: 'agy-bridge devices: no paired device has the id "abc"; `agy-bridge devices` lists them\n' });
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const none = await runMain(["pair", "--url", `http://127.0.0.1:${port}`], { env: { ...envFor(dir), AGY_BRIDGE_TOKEN: "x".repeat(32) } });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      new RegExp(`^agy-bridge pair: cannot reach serve at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); start \`agy-bridge serve\``),
    );
    expect(none.stderr).not.toContain("x".repeat(32));
    const remote = await runMain(["pair", "--url", "http://192.0.2.1:7878"], { env: envFor(dir) });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain("--url must name serve on this machine");
  });
});
