/**
 * The page's service worker in a real headless Chromium: it registers, keeps
 * the shell working offline, shows a Web Push message (delivered through the
 * DevTools protocol, `ServiceWorker.deliverPushMessage`) as a notification,
 * and a click on that notification opens the card it names.
 *
 * Headless Chromium has no notification centre to click in, so the click is
 * a `notificationclick` event dispatched inside the service worker on the
 * notification it shows; and it has no push service, so subscribing is
 * checked up to the key request and the error the page reports.
 */
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { loadApprovalPage } from "../../src/server/approval-page.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { launchChromium } from "./support/page-browser.js";
import { permissionRequested } from "./support/scripted-session.js";

let harness: ApiHarness | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  await harness?.close();
  harness = undefined;
  browser = undefined;
});

const PUBLIC_KEY = "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U";

async function start(): Promise<{ h: ApiHarness; context: BrowserContext; page: Page; gates: MapperEvent[]; keyRequests: () => number }> {
  let keyRequests = 0;
  harness = await startApiHarness({
    page: await loadApprovalPage(),
    push: {
      get publicKey() {
        keyRequests += 1;
        return PUBLIC_KEY;
      },
      subscribe: async () => ({ id: "sub", created: true }),
    },
  });
  const session = harness.addSession("conv-a");
  await harness.hub.refresh();
  const gates = [3, 5, 7, 9, 11].map((n) => permissionRequested("conv-a", n, `make step-${n}`));
  for (const gate of gates) session.push(gate);
  session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
  browser = await launchChromium();
  const context = await browser.newContext({ permissions: ["notifications"], viewport: { width: 390, height: 500 } });
  const page = await context.newPage();
  await page.goto(harness.url);
  await page.getByTestId("token-input").fill(TEST_TOKEN);
  await page.getByTestId("token-save").click();
  await page.getByTestId("pending-item").nth(4).waitFor({ timeout: 20_000 });
  // Ready means registered and active.
  await page.evaluate("navigator.serviceWorker.ready.then(() => undefined)");
  return { h: harness, context, page, gates, keyRequests: () => keyRequests };
}

const idOf = (event: MapperEvent) => (event as { interactionId: string }).interactionId;

/** The DevTools session (with its ServiceWorker domain enabled) and the page's registration id. */
async function registration(page: Page, context: BrowserContext): Promise<{ cdp: CDPSession; id: string }> {
  const cdp = await context.newCDPSession(page);
  const found = new Promise<string>((resolve) => {
    cdp.on("ServiceWorker.workerRegistrationUpdated", (event: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
      const live = event.registrations.find((r) => !r.isDeleted);
      if (live !== undefined) resolve(live.registrationId);
    });
  });
  await cdp.send("ServiceWorker.enable");
  const id = await Promise.race([
    found,
    new Promise<string>((_, reject) => setTimeout(() => reject(new Error("DevTools reported no service worker registration within 10 s")), 10_000)),
  ]);
  return { cdp, id };
}

describe("the page's service worker", { timeout: 90_000 }, () => {
  it("shows a pushed request as a notification whose click opens that request's card", async () => {
    const { h, context, page, gates } = await start();
    const target = gates[3]!;
    const { cdp, id } = await registration(page, context);
    const payload = {
      type: "interaction.pending",
      conversationId: "conv-a",
      interactionId: idOf(target),
      title: "Run make step-9",
      body: "in ~/proj",
      url: `${h.url}/#/interactions/${idOf(target)}`,
    };
    // DevTools answers deliverPushMessage before the worker has the event, and on a loaded
    // machine a delivery can be lost; a repeat is harmless (same tag: one notification).
    const deliver = () => cdp.send("ServiceWorker.deliverPushMessage", { origin: h.url, registrationId: id, data: JSON.stringify(payload) });
    await deliver();
    let deliveredAt = Date.now();
    const shown = await pollFor(
      async () => {
        const list = await page.evaluate<{ title: string; body: string; tag: string; data: unknown }[]>(
          `navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((list) => list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data })))`,
        );
        if (list.length === 0 && Date.now() - deliveredAt > 5_000) {
          await deliver();
          deliveredAt = Date.now();
        }
        return list;
      },
      (list) => list.length > 0,
      "a notification from the pushed message",
      30_000,
    );
    expect(shown).toEqual([{ title: "Run make step-9", body: "in ~/proj", tag: idOf(target), data: { url: payload.url } }]);
    expect(await page.evaluate(`document.activeElement?.getAttribute("data-interaction-id") ?? null`)).toBeNull();
    const worker = context.serviceWorkers()[0]!;
    await worker.evaluate(
      `self.registration.getNotifications().then(([notification]) => { self.dispatchEvent(new NotificationEvent("notificationclick", { notification })); })`,
    );
    await pollFor(
      () => page.evaluate<string>(`document.activeElement?.getAttribute("data-interaction-id") ?? ""`),
      (v) => v === idOf(target),
      "the clicked request's card to have focus",
    );
    expect(await page.evaluate<string>("location.hash")).toBe(`#/interactions/${idOf(target)}`);
    expect(await page.locator(`[data-interaction-id="${idOf(target)}"]`).getAttribute("class")).toContain("highlight");
  });

  it("serves the page's shell from its cache when the network is gone", async () => {
    const { context, page } = await start();
    await pollFor(
      () => page.evaluate<number>("caches.keys().then((keys) => keys.length)"),
      (n) => n > 0,
      "the shell cache",
    );
    await page.reload();
    await context.setOffline(true);
    await page.reload();
    expect(await page.locator("h1").textContent()).toBe("agy inbox");
    await pollFor(
      () => page.getByTestId("connection").textContent(),
      (t) => /offline|unreachable|reconnecting/.test(t ?? ""),
      "the page to say it cannot reach serve",
    );
  });

  it("asks serve for the push key when notifications are turned on, and says so when the browser cannot subscribe", async () => {
    const { page, keyRequests } = await start();
    await page.locator("#settings > summary").click();
    await page.getByTestId("push-enable").click();
    const status = await pollFor(
      () => page.getByTestId("push-status").textContent(),
      (t) => /Notifications are on|Could not turn on/.test(t ?? ""),
      "the push status",
    );
    expect(keyRequests()).toBe(1);
    // Headless Chromium has no push service: the page reports the browser's error instead of claiming success.
    expect(status).toMatch(/Notifications are on for this browser\.|Could not turn on notifications: .+/);
  });
});

async function pollFor<T>(probe: () => Promise<T>, ok: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last saw ${JSON.stringify(last)}`);
}
