/**
 * Web Push against hostile input: endpoints that would make serve POST to
 * this machine or its network are refused (loopback only where a test lets
 * it in), each device holds a bounded number of subscriptions tied to it, a
 * revoked device's subscriptions are deleted and never pushed to, and a push
 * service that accepts connections and never answers holds at most the
 * pool's bound of them.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  checkEndpoint,
  createWebPushNotifier,
  generateVapidKeys,
  MAX_SUBSCRIPTIONS_PER_DEVICE,
  openPushSubscriptionStore,
  PUSH_POOL,
  PUSH_POOL_SIZE,
  type Notifier,
  type PushReport,
} from "../../src/notify/index.js";
import { publicOnlyLookup } from "../../src/notify/web-push-notifier.js";
import { createDeviceStore } from "../../src/server/device-store.js";
import { createPairingCodes } from "../../src/server/pairing-codes.js";
import { startApiHarness } from "../server/support/api-harness.js";
import { until } from "../support/until.js";
import { permissionNotice } from "./support/notices.js";
import { newBrowserSubscription } from "./support/push-decrypt.js";
import { startRecordingServer } from "./support/recording-server.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-push-hard-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { "content-type": "application/json" } });

describe("push endpoints", () => {
  const inward = [
    "http://127.0.0.1:8080/x",
    "https://127.0.0.1/x",
    "https://127.1.2.3:9/x",
    "https://localhost/x",
    "https://api.localhost/x",
    "https://[::1]/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://[::ffff:7f00:1]/x",
    "https://10.0.0.5/x",
    "https://172.16.3.4/x",
    "https://192.168.1.1/x",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/x",
    "https://0.0.0.0/x",
    "https://[fd00::1]/x",
    "https://[fe80::1]/x",
    "https://router/x",
    "https://nas.local/x",
    "http://push.example/x",
    "ftp://push.example/x",
    "https://user:pw@push.example/x",
  ];

  it("refuses every endpoint on this machine, a private network or a local name, and anything but https", () => {
    for (const endpoint of inward) expect(() => checkEndpoint(endpoint), endpoint).toThrow(/https: URL|this machine or a private network|user:password/);
    for (const endpoint of [
      "https://fcm.googleapis.com/fcm/send/abc",
      "https://updates.push.services.mozilla.com/wpush/v2/abc",
      "https://web.push.apple.com/QO1",
      "https://8.8.8.8/x",
    ]) {
      expect(() => checkEndpoint(endpoint), endpoint).not.toThrow();
    }
  });

  it("lets loopback in only when asked to (a test's stand-in), and nothing else inward then", () => {
    for (const endpoint of ["http://127.0.0.1:8080/x", "https://[::1]:9/x", "http://localhost:1/x"])
      expect(() => checkEndpoint(endpoint, { allowLoopback: true }), endpoint).not.toThrow();
    for (const endpoint of ["https://10.0.0.5/x", "https://192.168.1.1/x", "http://push.example/x", "https://nas.local/x"])
      expect(() => checkEndpoint(endpoint, { allowLoopback: true }), endpoint).toThrow();
  });

  it("refuses them at POST /v1/push/subscriptions with 422, and nothing is ever sent there", async () => {
    const dir = await tempDir();
    const local = await startRecordingServer(() => ({ status: 201 }));
    cleanup.push(() => local.close());
    const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"));
    const keys = generateVapidKeys();
    const api = await startApiHarness({ push: { publicKey: keys.publicKey, subscribe: (s, d) => store.add(s, d), unsubscribe: (e, d) => store.remove(e, d) } });
    cleanup.push(() => api.close());
    for (const endpoint of [`${local.url}/admin/shutdown`, local.url.replace("http:", "https:"), "https://169.254.169.254/latest"]) {
      const res = await api.fetch("/v1/push/subscriptions", { method: "POST", ...json(newBrowserSubscription(endpoint).json) });
      expect(res.status, endpoint).toBe(422);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/https: URL of a push service|this machine or a private network/);
    }
    expect(store.list()).toEqual([]);
    const notifier = createWebPushNotifier({ keys, store });
    cleanup.push(() => notifier.close());
    notifier.pending(permissionNotice());
    await notifier.close();
    expect(local.requests).toEqual([]);
  });

  it("never sends to a stored loopback endpoint (an older version's file) without the test switch", async () => {
    const dir = await tempDir();
    const local = await startRecordingServer(() => ({ status: 201 }));
    cleanup.push(() => local.close());
    const file = join(dir, "push-subscriptions.json");
    const loose = await openPushSubscriptionStore(file, { allowLoopback: true });
    await loose.add(newBrowserSubscription(`${local.url}/x`).json);
    const strict = await openPushSubscriptionStore(file);
    expect(strict.list()).toEqual([]);
  });

  it("checks the address a name resolves to as it connects: refused inward, reached when loopback is allowed", async () => {
    const dir = await tempDir();
    const service = await startRecordingServer(() => ({ status: 201 }));
    cleanup.push(() => service.close());
    // A name, not an address: only the connect-time check sees where it leads.
    const endpoint = `${service.url.replace("127.0.0.1", "localhost")}/by-name`;
    for (const allowLoopback of [false, true]) {
      const store = await openPushSubscriptionStore(join(dir, `subs-${allowLoopback}.json`), { allowLoopback: true });
      await store.add(newBrowserSubscription(endpoint).json);
      const reports: PushReport[] = [];
      const notifier = createWebPushNotifier({
        keys: generateVapidKeys(),
        store,
        allowLoopback,
        retry: { firstRetryMs: 10 },
        onReport: (r) => reports.push(r),
      });
      cleanup.push(() => notifier.close());
      notifier.pending(permissionNotice());
      const [report] = await until(() => (reports.length > 0 ? reports : undefined), "the push's end", { ms: 10_000 });
      if (allowLoopback) expect(report).toMatchObject({ result: "delivered", attempts: 1 });
      else
        expect(report).toMatchObject({ result: "gave_up", attempts: 1, error: expect.stringMatching(/^localhost resolves to .*, not a public push service$/) });
      await notifier.close();
    }
    expect(service.requests.map((r) => r.path)).toEqual(["/by-name"]);
  });

  it("refuses, when connecting, a name that resolves to this machine", async () => {
    const lookup = publicOnlyLookup(false);
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup("localhost", { all: true }, (error) => resolve(error)));
    expect(refused?.code).toBe("EPUSHADDRESS");
    expect(refused?.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1), not a public push service/);
    const allowed = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup(true)("localhost", { all: true }, (error) => resolve(error)));
    expect(allowed).toBeNull();
  });
});

describe("subscriptions per device", () => {
  it(`keeps at most ${MAX_SUBSCRIPTIONS_PER_DEVICE} per device, the newest, and leaves other devices' alone`, async () => {
    const dir = await tempDir();
    const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"));
    await store.add(newBrowserSubscription("https://push.example/owner").json);
    await store.add(newBrowserSubscription("https://push.example/other").json, "bbbbbbbbbbbb");
    for (let i = 1; i <= 12; i++) await store.add(newBrowserSubscription(`https://push.example/a/${i}`).json, "aaaaaaaaaaaa");
    const of = (device: string) =>
      store
        .list()
        .filter((s) => s.device === device)
        .map((s) => s.endpoint);
    expect(of("aaaaaaaaaaaa")).toEqual([8, 9, 10, 11, 12].map((i) => `https://push.example/a/${i}`));
    expect(of("bbbbbbbbbbbb")).toEqual(["https://push.example/other"]);
    expect(of("owner")).toEqual(["https://push.example/owner"]);
    const reopened = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"));
    expect(reopened.list()).toHaveLength(7);
  });

  it("ties a subscription to the device that stored it: a device removes only its own, and revoking it deletes them and stops its pushes", async () => {
    const dir = await tempDir();
    const service = await startRecordingServer(() => ({ status: 201 }));
    cleanup.push(() => service.close());
    const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"), { allowLoopback: true });
    const devices = createDeviceStore({ file: join(dir, "devices.json") });
    const keys = generateVapidKeys();
    const api = await startApiHarness({
      devices,
      pairing: createPairingCodes(),
      push: { publicKey: keys.publicKey, subscribe: (s, d) => store.add(s, d), unsubscribe: (e, d) => store.remove(e, d) },
    });
    cleanup.push(() => api.close());
    const pair = async (name: string) => {
      const { code } = (await (await api.fetch("/v1/pairing/codes", { method: "POST" })).json()) as { code: string };
      return (await (await api.fetch("/v1/pairing", { token: null, method: "POST", ...json({ code, name }) })).json()) as { deviceId: string; token: string };
    };
    const phone = await pair("phone");
    const tablet = await pair("tablet");
    const phoneSub = newBrowserSubscription(`${service.url}/phone`).json;
    const tabletSub = newBrowserSubscription(`${service.url}/tablet`).json;
    expect((await api.fetch("/v1/push/subscriptions", { token: phone.token, method: "POST", ...json(phoneSub) })).status).toBe(201);
    expect((await api.fetch("/v1/push/subscriptions", { token: tablet.token, method: "POST", ...json(tabletSub) })).status).toBe(201);
    expect(store.list().map((s) => [s.endpoint, s.device])).toEqual([
      [phoneSub.endpoint, phone.deviceId],
      [tabletSub.endpoint, tablet.deviceId],
    ]);
    // The tablet cannot unsubscribe the phone.
    expect(
      await (await api.fetch("/v1/push/subscriptions", { token: tablet.token, method: "DELETE", ...json({ endpoint: phoneSub.endpoint }) })).json(),
    ).toEqual({ removed: false });

    const reports: PushReport[] = [];
    const notifier: Notifier = createWebPushNotifier({
      keys,
      store,
      allowLoopback: true,
      onReport: (r) => reports.push(r),
      pairedDevices: async () => new Set((await devices.list()).map((d) => d.id)),
    });
    cleanup.push(() => notifier.close());
    notifier.pending(permissionNotice({ interactionId: "int_before" }));
    await service.until((r) => r.length >= 2, "a push to each device");

    expect(await devices.revoke(phone.deviceId)).toBe(true);
    notifier.pending(permissionNotice({ interactionId: "int_after" }));
    await until(() => (reports.filter((r) => r.interactionId === "int_after").length >= 1 ? true : undefined), "the push after the revocation", { ms: 10_000 });
    await notifier.close();
    expect(service.requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/phone", "/tablet"]));
    expect(service.requests.filter((r) => r.path === "/phone")).toHaveLength(1);
    expect(service.requests.filter((r) => r.path === "/tablet")).toHaveLength(2);
    expect(store.list().map((s) => s.endpoint)).toEqual([tabletSub.endpoint]);
    const onDisk = JSON.parse(await readFile(join(dir, "push-subscriptions.json"), "utf8")) as Array<{ endpoint: string }>;
    expect(onDisk.map((s) => s.endpoint)).toEqual([tabletSub.endpoint]);
  });
});

describe("the push pool", () => {
  /** A push service that accepts every connection and never answers; counts the connections open at once. */
  async function silentService() {
    const sockets = new Set<Socket>();
    let seen = 0;
    let most = 0;
    const server: Server = createServer(() => {
      // Never answered.
    });
    server.on("connection", (socket: Socket) => {
      sockets.add(socket);
      seen += 1;
      most = Math.max(most, sockets.size);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return { url, open: () => sockets.size, seen: () => seen, most: () => most };
  }

  it(`holds at most ${PUSH_POOL_SIZE} connections to a push service that never answers, however many subscriptions and notices`, async () => {
    const dir = await tempDir();
    const service = await silentService();
    const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"), { allowLoopback: true, maxPerDevice: 50 });
    for (let i = 0; i < 5; i++) await store.add(newBrowserSubscription(`${service.url}/sub/${i}`).json);
    // A deadline longer than the test: nothing finishes, so whatever connects stays connected.
    const notifier = createWebPushNotifier({ keys: generateVapidKeys(), store, allowLoopback: true, timeoutMs: 120_000 });
    cleanup.push(() => notifier.close());
    for (let i = 0; i < 8; i++) notifier.pending(permissionNotice({ interactionId: `int_${i}` }));
    // 40 pushes: every one is either on one of the pool's connections or waiting for a place.
    const settled = await until(
      () => (PUSH_POOL.active + PUSH_POOL.waiting === 40 && service.open() === PUSH_POOL.active && PUSH_POOL.active === PUSH_POOL_SIZE ? true : undefined),
      "40 pushes, each on a connection or waiting",
      {
        ms: 20_000,
        seen: () => `active ${PUSH_POOL.active}, waiting ${PUSH_POOL.waiting}, open at the service ${service.open()}, most ever ${service.most()}`,
      },
    );
    expect(settled).toBe(true);
    expect(service.most()).toBeLessThanOrEqual(PUSH_POOL_SIZE);
    expect(service.seen()).toBe(PUSH_POOL_SIZE);
    await notifier.close();
    expect(PUSH_POOL.active + PUSH_POOL.waiting).toBe(0);
  });

  it("gives up an attempt the push service never answers at its deadline, closing its connection", async () => {
    const dir = await tempDir();
    const service = await silentService();
    const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"), { allowLoopback: true });
    await store.add(newBrowserSubscription(`${service.url}/sub`).json);
    const reports: PushReport[] = [];
    const notifier = createWebPushNotifier({
      keys: generateVapidKeys(),
      store,
      allowLoopback: true,
      timeoutMs: 200,
      retry: { maxAttempts: 2, firstRetryMs: 10 },
      onReport: (r) => reports.push(r),
    });
    cleanup.push(() => notifier.close());
    notifier.pending(permissionNotice());
    const [report] = await until(() => (reports.length > 0 ? reports : undefined), "the push's end", { ms: 10_000 });
    expect(report).toMatchObject({ result: "gave_up", attempts: 2, error: "ETIMEDOUT" });
    await until(() => (service.open() === 0 ? true : undefined), "the service's connections to close", { ms: 10_000, seen: () => `${service.open()} open` });
    expect(service.seen()).toBe(2);
  });
});
