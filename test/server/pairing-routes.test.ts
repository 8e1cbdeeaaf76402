/**
 * Pairing over a real loopback API server: the bearer token's holder asks
 * for a code, a browser exchanges it once for a device token, the device
 * token works on the page's routes (and answers as `page:<name>`) until it
 * is revoked — and neither token ever shows up in a URL or a log line.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceStore, type DeviceStore } from "../../src/server/device-store.js";
import { createFailureLimiter } from "../../src/server/bearer-token.js";
import { createPairingCodes } from "../../src/server/pairing-codes.js";
import type { InteractionAction } from "../../src/server/contract.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { permissionRequested } from "./support/scripted-session.js";
import { until } from "../support/until.js";

let harness: ApiHarness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  harness = undefined;
  dir = undefined;
});

async function world(options: { now?: () => number; maxFailures?: number; revocationCheckMs?: number } = {}) {
  dir = await mkdtemp(join(tmpdir(), "agyb-pairing-"));
  const devices: DeviceStore = createDeviceStore({ file: join(dir, "devices.json") });
  const log: string[] = [];
  harness = await startApiHarness({
    devices,
    pairing: createPairingCodes(options.now === undefined ? {} : { now: options.now }),
    log: (line) => log.push(line),
    limiter: createFailureLimiter({ maxFailures: options.maxFailures ?? 10 }),
    revocationCheckMs: options.revocationCheckMs ?? 50,
  });
  return { h: harness, devices, log };
}

async function newCode(h: ApiHarness): Promise<{ code: string; url: string; expiresAt: string }> {
  const res = await h.fetch("/v1/pairing/codes", { method: "POST" });
  expect(res.status).toBe(201);
  return (await res.json()) as { code: string; url: string; expiresAt: string };
}

function exchange(h: ApiHarness, code: string, name = "Pixel") {
  return h.fetch("/v1/pairing", { token: null, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code, name }) });
}

describe("pairing a device", () => {
  it("gives a link with the code in its fragment, exchanged once for a device token that lists sessions", async () => {
    const { h, log } = await world();
    h.addSession("conv-a");
    await h.hub.refresh();
    const issued = await newCode(h);
    expect(issued.url).toBe(`${h.url}/#/pair/${issued.code}`);
    expect(issued.url).not.toContain(TEST_TOKEN);
    const first = await exchange(h, issued.code);
    expect(first.status).toBe(201);
    const paired = (await first.json()) as { deviceId: string; name: string; token: string };
    expect(paired).toEqual({ deviceId: expect.stringMatching(/^[0-9a-f]{12}$/), name: "Pixel", token: expect.stringMatching(/^agyd\./) });
    const again = await exchange(h, issued.code);
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ result: "pairing_refused", detail: expect.stringContaining("agy-bridge pair") });
    const sessions = await h.fetch("/v1/sessions", { token: paired.token });
    expect(sessions.status).toBe(200);
    expect(((await sessions.json()) as { sessions: { conversationId: string }[] }).sessions.map((s) => s.conversationId)).toEqual(["conv-a"]);
    for (const secret of [TEST_TOKEN, paired.token, issued.code]) expect(log.join("\n")).not.toContain(secret);
  });

  it("refuses a code after five minutes on the server's clock", async () => {
    let now = Date.parse("2026-12-01T08:00:00Z");
    const { h } = await world({ now: () => now });
    const issued = await newCode(h);
    expect(issued.expiresAt).toBe("2026-12-01T08:05:00.000Z");
    now += 5 * 60_000;
    expect((await exchange(h, issued.code)).status).toBe(401);
  });

  it("lets no device token mint pairing codes", async () => {
    const { h } = await world();
    const paired = (await (await exchange(h, (await newCode(h)).code)).json()) as { token: string };
    const res = await h.fetch("/v1/pairing/codes", { token: paired.token, method: "POST" });
    expect(res.status).toBe(403);
  });

  it("records a device's answer as page:<device name>, and the bearer token's page answer as page", async () => {
    const { h } = await world();
    const session = h.addSession("conv-a");
    const seen: string[] = [];
    session.respond = async (_id: string, _action: InteractionAction, decidedBy?: string) => {
      seen.push(decidedBy ?? "");
      return { result: "delivered", stepIndex: 3 };
    };
    await h.hub.refresh();
    session.push(permissionRequested("conv-a", 3, "npm test"));
    session.push(permissionRequested("conv-a", 5, "npm run lint"));
    const iid = (n: number) => (permissionRequested("conv-a", n, "") as { interactionId: string }).interactionId;
    for (let i = 0; i < 200 && (h.hub.get("conv-a")?.pending().length ?? 0) < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const paired = (await (await exchange(h, (await newCode(h)).code, "Jo's phone")).json()) as { token: string };
    const body = JSON.stringify({ action: "approve" });
    const headers = { "content-type": "application/json", "x-agy-bridge-client": "page" };
    expect((await h.fetch(`/v1/sessions/conv-a/interactions/${iid(3)}`, { token: paired.token, method: "POST", headers, body })).status).toBe(200);
    expect((await h.fetch(`/v1/sessions/conv-a/interactions/${iid(5)}`, { method: "POST", headers, body })).status).toBe(200);
    expect(seen).toEqual(["page:Jo's phone", "page"]);
  });

  it("refuses a revoked device's token on its next request", async () => {
    const { h, devices } = await world();
    const paired = (await (await exchange(h, (await newCode(h)).code)).json()) as { deviceId: string; token: string };
    expect((await h.fetch("/v1/sessions", { token: paired.token })).status).toBe(200);
    expect(await devices.revoke(paired.deviceId)).toBe(true);
    expect((await h.fetch("/v1/sessions", { token: paired.token })).status).toBe(401);
    expect((await h.fetch("/v1/sessions")).status).toBe(200);
  });

  it("ends a revoked device's open event stream, and keeps the bearer token's", async () => {
    const { h, devices } = await world();
    h.addSession("conv-a");
    await h.hub.refresh();
    const paired = (await (await exchange(h, (await newCode(h)).code)).json()) as { deviceId: string; token: string };
    const deviceStream = await h.fetch("/v1/sessions/conv-a/events", { token: paired.token });
    const ownerStream = await h.fetch("/v1/sessions/conv-a/events");
    expect([deviceStream.status, ownerStream.status]).toEqual([200, 200]);
    const drain = async (res: Response) => {
      let text = "";
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += value;
      }
    };
    const deviceText = drain(deviceStream);
    let ownerEnded = false;
    void drain(ownerStream).then(
      () => (ownerEnded = true),
      () => (ownerEnded = true),
    );
    expect(await devices.revoke(paired.deviceId)).toBe(true);
    const text = await Promise.race([
      deviceText,
      new Promise<string>((_, reject) => setTimeout(() => reject(new Error("the revoked device's stream was still open after 10 s")), 10_000)),
    ]);
    expect(text).toContain(": device revoked");
    expect(ownerEnded).toBe(false);
  });

  it("ends a revoked device's open stream at once when another process (`agy-bridge devices`) revokes it, with no periodic check to wait for", async () => {
    // The periodic check is an hour away: only the watch on the device file can end the stream in time.
    const { h } = await world({ revocationCheckMs: 3_600_000 });
    h.addSession("conv-a");
    await h.hub.refresh();
    const paired = (await (await exchange(h, (await newCode(h)).code)).json()) as { deviceId: string; token: string };
    const stream = await h.fetch("/v1/sessions/conv-a/events", { token: paired.token });
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const ended = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += value;
      }
    })();
    await until(() => text.includes("retry:"), "the stream to open", { seen: () => text });
    // Another process's store on the same file, as the CLI has.
    const cli = createDeviceStore({ file: join(dir!, "devices.json") });
    expect(await cli.revoke(paired.deviceId)).toBe(true);
    let finished: string | undefined;
    void ended.then((t) => (finished = t));
    const final = await until(() => finished, "the revoked device's stream to end", { ms: 10_000, seen: () => text });
    expect(final).toContain(": device revoked");
  });

  it("limits guessed codes per address, and says to wait — but never locks the right code out", async () => {
    const { h } = await world({ maxFailures: 2 });
    const issued = await newCode(h);
    expect((await exchange(h, "guess-1")).status).toBe(401);
    expect((await exchange(h, "guess-2")).status).toBe(401);
    const limited = await exchange(h, "guess-3");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    // Same address (every local process is 127.0.0.1), within the minute: the right code pairs.
    const right = await exchange(h, issued.code);
    expect(right.status).toBe(201);
    const { token } = (await right.json()) as { token: string };
    // And the device token it gave is not locked out either.
    expect((await h.fetch("/v1/sessions", { token })).status).toBe(200);
    // Used now: once only, like every code.
    expect((await exchange(h, issued.code)).status).toBe(429);
  });
});
