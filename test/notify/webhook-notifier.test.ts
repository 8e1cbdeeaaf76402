/**
 * Webhooks against real receivers on loopback: the exact body and headers,
 * a signature a receiver can check, the same delivery id on every retry,
 * and one dead endpoint holding up nothing else.
 */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createWebhookNotifier, verifyWebhook, type Notifier, type WebhookReport } from "../../src/notify/index.js";
import { permissionNotice, resolvedOf } from "./support/notices.js";
import { startRecordingServer, type Responder } from "./support/recording-server.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const SECRET = "s3cret-for-tests";

async function receiver(respond?: Responder) {
  const server = await startRecordingServer(respond);
  cleanup.push(() => server.close());
  return server;
}

function notifier(url: string, reports: WebhookReport[] = [], extra: Partial<Parameters<typeof createWebhookNotifier>[0]> = {}): Notifier {
  const n = createWebhookNotifier({ url, secret: SECRET, name: "webhook:1", onReport: (r) => reports.push(r), retry: { firstRetryMs: 20 }, ...extra });
  cleanup.push(() => n.close());
  return n;
}

describe("webhooks", () => {
  it('posts the documented body with a timestamp and an HMAC-SHA256 signature over "<timestamp>.<body>"', async () => {
    const hook = await receiver();
    const now = new Date("2026-12-01T08:00:00.000Z");
    notifier(`${hook.url}/hooks/agy?k=1`, [], { now: () => now }).pending(permissionNotice());
    const [request] = await hook.until((r) => r.length === 1, "the webhook");
    const body = request!.body.toString("utf8");
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/hooks/agy?k=1");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["x-agy-bridge-timestamp"]).toBe("1796112000");
    const expected = createHmac("sha256", SECRET).update(`1796112000.${body}`).digest("hex");
    expect(request!.headers["x-agy-bridge-signature"]).toBe(`sha256=${expected}`);
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(["type", "id", "time", "conversationId", "interactionId", "host", "request", "outcome", "url", "waitingFor"]);
    expect(parsed).toEqual({
      type: "interaction.pending",
      id: expect.stringMatching(/^whd_[0-9a-f]{24}$/),
      time: "2026-12-01T08:00:00.000Z",
      conversationId: "conv-1",
      interactionId: "int_0123456789abcdef",
      host: "devbox",
      request: { kind: "permission", action: "command", target: "npm test", description: "Running the tests" },
      outcome: null,
      url: "http://127.0.0.1:7878/#/interactions/int_0123456789abcdef",
      waitingFor: "permission",
    });
    expect(verifyWebhook(SECRET, { timestamp: "1796112000", signature: request!.headers["x-agy-bridge-signature"] as string }, body, 1796112010)).toBe(true);
    expect(
      verifyWebhook("another-secret", { timestamp: "1796112000", signature: request!.headers["x-agy-bridge-signature"] as string }, body, 1796112010),
    ).toBe(false);
    // A replay ten minutes later is refused by the documented check.
    expect(verifyWebhook(SECRET, { timestamp: "1796112000", signature: request!.headers["x-agy-bridge-signature"] as string }, body, 1796112600)).toBe(false);
  });

  it("sends the resolution with its outcome", async () => {
    const hook = await receiver();
    const n = notifier(hook.url);
    n.resolved(resolvedOf(permissionNotice(), "denied", "page"));
    const [request] = await hook.until((r) => r.length === 1, "the resolution");
    expect(JSON.parse(request!.body.toString("utf8"))).toMatchObject({
      type: "interaction.resolved",
      outcome: "denied",
      interactionId: "int_0123456789abcdef",
    });
  });

  it("retries a failing endpoint with the same delivery id and body, and reports the delivery", async () => {
    const hook = await receiver((_, index) => ({ status: index < 2 ? 503 : 204 }));
    const reports: WebhookReport[] = [];
    notifier(hook.url, reports).pending(permissionNotice());
    const requests = await hook.until((r) => r.length === 3, "three attempts");
    expect(new Set(requests.map((r) => r.body.toString("utf8"))).size).toBe(1);
    for (const r of requests)
      expect(
        verifyWebhook(
          SECRET,
          { timestamp: r.headers["x-agy-bridge-timestamp"] as string, signature: r.headers["x-agy-bridge-signature"] as string },
          r.body.toString("utf8"),
          Math.floor(Date.now() / 1000),
        ),
      ).toBe(true);
    await expect.poll(() => reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ result: "delivered", attempts: 3, status: 204, notifier: "webhook:1", origin: hook.url });
    expect(reports[0]!.delivery.id).toBe((JSON.parse(requests[0]!.body.toString("utf8")) as { id: string }).id);
  });

  it("gives up at once on a 4xx that will not change, and after the attempts run out otherwise", async () => {
    const refusing = await receiver(() => ({ status: 400 }));
    const failing = await receiver(() => ({ status: 500 }));
    const reports: WebhookReport[] = [];
    notifier(refusing.url, reports).pending(permissionNotice());
    createWebhookNotifierFor(failing.url, reports, { maxAttempts: 3, firstRetryMs: 10 }).pending(permissionNotice());
    await expect.poll(() => reports.length, { timeout: 10_000 }).toBe(2);
    expect(reports.find((r) => r.origin === refusing.url)).toMatchObject({ result: "gave_up", attempts: 1, status: 400 });
    expect(reports.find((r) => r.origin === failing.url)).toMatchObject({ result: "gave_up", attempts: 3, status: 500 });
    expect(refusing.requests).toHaveLength(1);
    expect(failing.requests).toHaveLength(3);
  });

  it("keeps delivering to a live endpoint while another one hangs", async () => {
    const hanging = await receiver(() => new Promise(() => undefined));
    const live = await receiver();
    const stuck = notifier(hanging.url);
    const fine = notifier(live.url);
    for (let i = 0; i < 3; i++) {
      stuck.pending(permissionNotice({ interactionId: `int_${i}` }));
      fine.pending(permissionNotice({ interactionId: `int_${i}` }));
    }
    await live.until((r) => r.length === 3, "three deliveries to the live endpoint");
    await hanging.until((r) => r.length === 3, "the hanging endpoint to have been tried for each");
  });
});

function createWebhookNotifierFor(url: string, reports: WebhookReport[], retry: { maxAttempts: number; firstRetryMs: number }): Notifier {
  const n = createWebhookNotifier({ url, secret: SECRET, name: "webhook:2", onReport: (r) => reports.push(r), retry });
  cleanup.push(() => n.close());
  return n;
}
