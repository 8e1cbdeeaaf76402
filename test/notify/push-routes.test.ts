/**
 * The page's push routes over the subscription store serve uses: the key,
 * subscribing, and unsubscribing, all behind the bearer token.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateVapidKeys, openPushSubscriptionStore } from "../../src/notify/index.js";
import { startApiHarness } from "../server/support/api-harness.js";
import { newBrowserSubscription } from "./support/push-decrypt.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function world() {
  const dir = await mkdtemp(join(tmpdir(), "agyb-push-routes-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const store = await openPushSubscriptionStore(join(dir, "push-subscriptions.json"));
  const keys = generateVapidKeys();
  const api = await startApiHarness({ push: { publicKey: keys.publicKey, subscribe: (s, d) => store.add(s, d), unsubscribe: (e, d) => store.remove(e, d) } });
  cleanup.push(() => api.close());
  return { api, store, keys };
}

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { "content-type": "application/json" } });

describe("the push routes", () => {
  it("gives the VAPID public key, stores a subscription, and forgets it on DELETE", async () => {
    const { api, store, keys } = await world();
    expect(await (await api.fetch("/v1/push/key")).json()).toEqual({ publicKey: keys.publicKey });
    const browser = newBrowserSubscription("https://push.example/send/abc");
    const created = await api.fetch("/v1/push/subscriptions", { method: "POST", ...json(browser.json) });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { id: string; created: boolean };
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), created: true });
    expect(JSON.stringify(body)).not.toContain("push.example");
    expect(store.list()).toEqual([{ ...browser.json, device: "owner" }]);
    const removed = await api.fetch("/v1/push/subscriptions", { method: "DELETE", ...json({ endpoint: browser.json.endpoint }) });
    expect(await removed.json()).toEqual({ removed: true });
    expect(store.list()).toEqual([]);
    const again = await api.fetch("/v1/push/subscriptions", { method: "DELETE", ...json({ endpoint: browser.json.endpoint }) });
    expect(await again.json()).toEqual({ removed: false });
  });

  it("refuses a subscription push cannot use (422) and one without keys (400)", async () => {
    const { api, store } = await world();
    const plain = await api.fetch("/v1/push/subscriptions", { method: "POST", ...json(newBrowserSubscription("http://push.example/x").json) });
    expect(plain.status).toBe(422);
    expect(((await plain.json()) as { detail: string }).detail).toMatch(/https:/);
    const noKeys = await api.fetch("/v1/push/subscriptions", { method: "POST", ...json({ endpoint: "https://push.example/x" }) });
    expect(noKeys.status).toBe(400);
    expect(store.list()).toEqual([]);
  });

  it("answers none of it without the bearer token", async () => {
    const { api, store } = await world();
    expect((await api.fetch("/v1/push/key", { token: null })).status).toBe(401);
    expect(
      (await api.fetch("/v1/push/subscriptions", { method: "POST", token: null, ...json(newBrowserSubscription("https://push.example/x").json) })).status,
    ).toBe(401);
    expect(store.list()).toEqual([]);
  });
});
