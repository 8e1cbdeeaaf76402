/**
 * Web Push against a push service stand-in on loopback that does what a
 * real one and the browser do between them: checks the VAPID JWT against
 * the server's public key and decrypts the RFC 8291 payload with the
 * subscription's private key.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWebPushNotifier, generateVapidKeys, openPushSubscriptionStore, type Notifier, type PushReport } from "../../src/notify/index.js";
import { permissionNotice, resolvedOf } from "./support/notices.js";
import { newBrowserSubscription, verifyVapid } from "./support/push-decrypt.js";
import { startRecordingServer, type RecordingServer } from "./support/recording-server.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function world(respond?: Parameters<typeof startRecordingServer>[0]) {
  const dir = await mkdtemp(join(tmpdir(), "agyb-push-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const service: RecordingServer = await startRecordingServer(respond);
  cleanup.push(() => service.close());
  // The stand-in is on loopback, which only a test lets in.
  const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"), { allowLoopback: true });
  const keys = generateVapidKeys();
  const reports: PushReport[] = [];
  const notifier: Notifier = createWebPushNotifier({ keys, store, onReport: (r) => reports.push(r), retry: { firstRetryMs: 10 }, allowLoopback: true });
  cleanup.push(() => notifier.close());
  return { dir, service, store, keys, notifier, reports };
}

describe("Web Push", () => {
  it("pushes a pending interaction signed with VAPID and encrypted so only the subscription can read it", async () => {
    const w = await world(() => ({ status: 201 }));
    const browser = newBrowserSubscription(`${w.service.url}/push/abc`);
    await w.store.add(browser.json);
    w.notifier.pending(permissionNotice({ escalation: "If nobody answers within 5m, you will be reminded." }));
    const [request] = await w.service.until((r) => r.length >= 1, "the push");
    expect(request!.path).toBe("/push/abc");
    expect(request!.headers["content-encoding"]).toBe("aes128gcm");
    expect(Number(request!.headers["ttl"])).toBeGreaterThan(0);
    const claims = verifyVapid(request!.headers.authorization, w.keys.publicKey);
    expect(claims.aud).toBe(w.service.url);
    expect(claims.exp).toBeGreaterThan(Date.now() / 1000);
    expect(claims.exp).toBeLessThanOrEqual(Date.now() / 1000 + 24 * 3600);
    expect(JSON.parse(browser.decrypt(request!.body))).toEqual({
      type: "interaction.pending",
      conversationId: "conv-1",
      interactionId: "int_0123456789abcdef",
      title: "agy asks to run a command · permission",
      body: "npm test\nRunning the tests\nIf nobody answers within 5m, you will be reminded.",
      url: "http://127.0.0.1:7878/#/interactions/int_0123456789abcdef",
      escalated: false,
      escalation: "If nobody answers within 5m, you will be reminded.",
    });
    // Another subscription's keys cannot read it.
    expect(() => newBrowserSubscription(w.service.url).decrypt(request!.body)).toThrow();
  });

  it("pushes the resolution with its outcome and who answered, under the same topic", async () => {
    const w = await world(() => ({ status: 201 }));
    const browser = newBrowserSubscription(`${w.service.url}/push/abc`);
    await w.store.add(browser.json);
    const notice = permissionNotice();
    w.notifier.pending(notice);
    w.notifier.resolved(resolvedOf(notice, "approved", "telegram:ana"));
    const requests = await w.service.until((r) => r.length >= 2, "two pushes");
    const payloads = requests.map((r) => JSON.parse(browser.decrypt(r.body)) as Record<string, unknown>);
    expect(payloads.find((p) => p["type"] === "interaction.resolved")).toMatchObject({
      title: "Approved by telegram:ana",
      outcome: "approved",
      decidedBy: "telegram:ana",
      interactionId: notice.interactionId,
    });
    expect(new Set(requests.map((r) => r.headers["topic"]))).toEqual(new Set(["int_0123456789abcdef"]));
  });

  it("drops a subscription its push service calls gone (410), from memory and from the file", async () => {
    const w = await world((r) => ({ status: r.path === "/gone" ? 410 : 201 }));
    await w.store.add(newBrowserSubscription(`${w.service.url}/gone`).json);
    await w.store.add(newBrowserSubscription(`${w.service.url}/alive`).json);
    w.notifier.pending(permissionNotice());
    await w.service.until((r) => r.length >= 2, "a push to each subscription");
    await expect.poll(() => w.store.list().map((s) => s.endpoint), { timeout: 5000 }).toEqual([`${w.service.url}/alive`]);
    await expect
      .poll(async () => (JSON.parse(await readFile(join(w.dir, "push-subscriptions.json"), "utf8")) as { endpoint: string }[]).map((s) => s.endpoint), {
        timeout: 5000,
      })
      .toEqual([`${w.service.url}/alive`]);
    expect(w.reports.find((r) => r.result === "gave_up")?.status).toBe(410);
    expect(w.service.requests.filter((r) => r.path === "/gone")).toHaveLength(1);
  });

  it("keeps subscriptions in a file only its owner can read, across a reopen", async () => {
    const w = await world();
    const browser = newBrowserSubscription("https://push.example/sub/1");
    expect(await w.store.add(browser.json)).toMatchObject({ created: true });
    expect(await w.store.add(browser.json)).toMatchObject({ created: false });
    const file = join(w.dir, "push-subscriptions.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const reopened = await openPushSubscriptionStore(file);
    expect(reopened.list()).toEqual([{ ...browser.json, device: "owner" }]);
    expect(await reopened.remove(browser.json.endpoint)).toBe(true);
    expect(await reopened.remove(browser.json.endpoint)).toBe(false);
  });

  it("refuses an endpoint that is plain http to another machine", async () => {
    const w = await world();
    await expect(w.store.add(newBrowserSubscription("http://push.example/sub").json)).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(w.store.add(newBrowserSubscription("ftp://127.0.0.1/sub").json)).rejects.toThrow(/https/);
    expect(w.store.list()).toEqual([]);
  });
});

describe("Web Push payloads", () => {
  it("cuts a long multi-byte request so the encrypted push stays within what push services take", async () => {
    const w = await world(() => ({ status: 201 }));
    const browser = newBrowserSubscription(`${w.service.url}/push/abc`);
    await w.store.add(browser.json);
    w.notifier.pending(
      permissionNotice({
        request: { kind: "permission", action: "command", target: `echo ${"日本語".repeat(400)}`, description: "" },
        escalation: `If nobody answers within 5m, agy-bridge denies it ("${"延".repeat(190)}").`,
      }),
    );
    const [request] = await w.service.until((r) => r.length >= 1, "the push");
    expect(request!.body.length).toBeLessThanOrEqual(4096);
    const plaintext = browser.decrypt(request!.body);
    // Under 3800 bytes before encryption: room for the record header, tag and padding in 4 KB.
    expect(Buffer.byteLength(plaintext)).toBeLessThanOrEqual(3800);
    const payload = JSON.parse(plaintext) as { body: string; url: string };
    expect(payload.body.startsWith("echo 日本語")).toBe(true);
    expect(payload.body).toMatch(/…\nIf nobody answers within 5m, agy-bridge denies it \("延+"\)\.$/);
    expect(payload.url).toBe("http://127.0.0.1:7878/#/interactions/int_0123456789abcdef");
  });
});
