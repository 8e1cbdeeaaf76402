/**
 * Notifications end to end: the simulator as agy in a real tmux pane, found
 * by `agy-bridge serve`, which tells a webhook receiver, a push service and a
 * Telegram Bot API — stand-ins on loopback that check what a real one would
 * (the signature, the VAPID JWT and RFC 8291 decryption, the Bot API calls).
 * Answered from one channel, the interaction resolves in all of them, and
 * agy gets exactly one answer.
 *
 * serve supervises every agy on the machine, other tests' simulators too:
 * each check looks only at this test's conversation, and nothing here
 * answers another's gate (no escalation that denies, a policy limited to
 * this conversation).
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { verifyWebhook } from "../../src/notify/index.js";
import { startServeWorld, type ServeWorld } from "../server/support/serve-world.js";
import { until } from "../support/until.js";
import { newBrowserSubscription, verifyVapid } from "./support/push-decrypt.js";
import { startRecordingServer, type Recorded } from "./support/recording-server.js";
import { startTelegramStandIn } from "./support/telegram-stand-in.js";

const BOT_TOKEN = "987654:e2e-bot-token";
const CHAT = 777;
const SECRET = "e2e-webhook-secret";
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface WebhookBody {
  type: string;
  id: string;
  interactionId: string;
  outcome: string | null;
  url: string;
  request: { kind: string; target?: string };
}

const bodyOf = (r: Recorded) => JSON.parse(r.body.toString("utf8")) as WebhookBody & { conversationId: string };
/** The webhook bodies about this world's conversation. */
const hooksOf = (requests: Recorded[], w: ServeWorld) => requests.filter((r) => bodyOf(r).conversationId === w.conversationId);
const signedOk = (r: Recorded) =>
  verifyWebhook(
    SECRET,
    { timestamp: r.headers["x-agy-bridge-timestamp"] as string, signature: r.headers["x-agy-bridge-signature"] as string },
    r.body.toString("utf8"),
    Math.floor(Date.now() / 1000),
  );

async function channels() {
  const dir = await mkdtemp(join(tmpdir(), "agyb-notify-e2e-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const hook = await startRecordingServer(() => ({ status: 204 }));
  cleanup.push(() => hook.close());
  const push = await startRecordingServer(() => ({ status: 201 }));
  cleanup.push(() => push.close());
  const telegram = await startTelegramStandIn(BOT_TOKEN);
  cleanup.push(() => telegram.close());
  await writeFile(join(dir, "secret"), `  ${SECRET}\n`);
  await writeFile(join(dir, "bot-token"), `${BOT_TOKEN}\n`);
  const args = [
    "--notify-webhook",
    `${hook.url}/agy`,
    "--notify-webhook-secret-file",
    join(dir, "secret"),
    "--telegram-bot-token-file",
    join(dir, "bot-token"),
    "--telegram-chat",
    String(CHAT),
    "--telegram-api-root",
    telegram.apiRoot,
    "--allow-loopback-push",
  ];
  return { dir, hook, push, telegram, args };
}

async function serve(serveArgs: (socket: string) => string[]): Promise<ServeWorld> {
  const world = await startServeWorld({ serveArgs: (tmux) => serveArgs(tmux.socketName) });
  cleanup.push(() => world.close());
  return world;
}

describe("serve's notifications", { timeout: 120_000 }, () => {
  it("tells every channel of a gate; a press in Telegram answers it once and every channel hears it was resolved", async () => {
    const c = await channels();
    const w = await serve((socket) => ["-L", socket, "--refresh-ms", "300", ...c.args]);
    const key = ((await (await w.api("/v1/push/key")).json()) as { publicKey: string }).publicKey;
    const browser = newBrowserSubscription(`${c.push.url}/sub/1`);
    expect((await w.api("/v1/push/subscriptions", { method: "POST", body: JSON.stringify(browser.json) })).status).toBe(201);
    expect((await stat(join(w.stateDir, "agy-bridge", "vapid.json"))).mode & 0o777).toBe(0o600);
    const pushesOf = (requests: Recorded[]) =>
      requests
        .map((p) => {
          try {
            return JSON.parse(browser.decrypt(p.body)) as { type: string; conversationId: string; interactionId: string };
          } catch (error) {
            throw new Error(`${p.method} ${p.path} (content-length ${p.headers["content-length"] ?? "none"}): ${(error as Error).message}`);
          }
        })
        .filter((p) => p.conversationId === w.conversationId);

    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    // The webhook: signed, the documented body, a deep link to the card.
    const [pending] = hooksOf(await c.hook.until((r) => hooksOf(r, w).length >= 1, "the pending webhook", 30_000), w);
    expect(signedOk(pending!)).toBe(true);
    const body = bodyOf(pending!);
    expect(body).toMatchObject({ type: "interaction.pending", outcome: null, request: { kind: "permission", target: "pwd" } });
    expect(body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/#/interactions/${body.interactionId}$`));
    // The push: VAPID from serve's key, a payload only this browser can read.
    const pushed = await c.push.until((r) => pushesOf(r).length >= 1, "the push", 30_000);
    for (const p of pushed) expect(verifyVapid(p.headers.authorization, key).aud).toBe(c.push.url);
    expect(pushesOf(pushed)[0]).toMatchObject({
      type: "interaction.pending",
      interactionId: body.interactionId,
      body: expect.stringContaining("pwd"),
      url: body.url,
    });
    // Telegram: a message with buttons, linking to the card.
    const message = await c.telegram.until(() => c.telegram.messages.find((m) => m.text.includes(body.url)), "the Telegram message", 30_000);
    expect(message.text).toContain("pwd");
    // Without --policy serve keeps no learned rules: nothing to remember, no such button.
    expect(message.reply_markup!.inline_keyboard.flat().map((b) => b.text)).toEqual(["Approve", "Deny"]);
    expect(message.text).not.toContain("Always");
    const approve = message.reply_markup!.inline_keyboard.flat().find((b) => b.text === "Approve")!;

    // Two people at once: a press in Telegram and an approval from the page.
    const press = c.telegram.press(CHAT, message.message_id, approve.callback_data!);
    const page = await w.api(`/v1/sessions/${w.conversationId}/interactions/${body.interactionId}`, {
      method: "POST",
      headers: { "x-agy-bridge-client": "page" },
      body: JSON.stringify({ action: "approve" }),
    });
    const pressAnswer = await c.telegram.until(() => c.telegram.callbackAnswers.get(press), "Telegram's answer to the press", 30_000);
    const results = [page.status === 200 ? "delivered" : "refused", pressAnswer === "Sent to agy." ? "delivered" : "refused"];
    expect(
      results.filter((r) => r === "delivered"),
      `page ${page.status}, telegram "${pressAnswer}"`,
    ).toHaveLength(1);

    // Resolved everywhere.
    const about = (r: Recorded[]) =>
      hooksOf(r, w)
        .map(bodyOf)
        .filter((b) => b.interactionId === body.interactionId);
    const resolution = about(await c.hook.until((r) => about(r).some((b) => b.type === "interaction.resolved"), "the resolution webhook", 30_000)).find(
      (b) => b.type === "interaction.resolved",
    )!;
    expect(resolution).toMatchObject({ outcome: "approved" });
    expect(resolution.id).not.toBe(body.id);
    expect(hooksOf(c.hook.requests, w).every(signedOk)).toBe(true);
    await c.telegram.until(() => (message.history.length >= 2 ? true : undefined), "the Telegram message to be edited", 30_000);
    expect(message.text).toMatch(/Approved by (page|telegram:ana)\./);
    expect(message.reply_markup).toBeUndefined();
    const pushes = await c.push.until(
      (r) => pushesOf(r).some((p) => p.type === "interaction.resolved" && p.interactionId === body.interactionId),
      "the resolution push",
      30_000,
    );
    expect(
      pushesOf(pushes)
        .filter((p) => p.interactionId === body.interactionId)
        .map((p) => p.type),
    ).toEqual(["interaction.pending", "interaction.resolved"]);

    // Exactly one answer reached agy, and the audit log says which; the webhook deliveries are there too.
    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    const notified = (records: Awaited<ReturnType<typeof readAuditLog>>["records"]) =>
      records.filter((r) => r.decision === "notify" && r.interactionId === body.interactionId);
    const records = await until(
      async () => {
        const { records } = await readAuditLog(audit);
        // The answer's own line comes when its delivery is confirmed, which can be after the webhooks.
        return notified(records).length >= 2 && records.some((r) => r.interactionId === body.interactionId && r.decision === "approve") ? records : undefined;
      },
      "the webhook deliveries and the answer in the audit log",
      { ms: 30_000, everyMs: 100 },
    );
    const answers = records.filter((r) => r.interactionId === body.interactionId && r.decision === "approve");
    expect(
      answers.filter((r) => r.delivery === "delivered"),
      JSON.stringify(records.filter((r) => r.conversationId === w.conversationId)),
    ).toHaveLength(1);
    expect(notified(records).map((r) => [r.decidedBy, r.delivery, r.request])).toEqual([
      ["webhook:1", "delivered", { commandLine: "pwd" }],
      ["webhook:1", "delivered", { commandLine: "pwd" }],
    ]);
    expect(w.stderr()).not.toContain(BOT_TOKEN);
    expect(w.stderr()).not.toContain(SECRET);
  });

  it("with a policy, tells people only of what the policy leaves to them", async () => {
    const c = await channels();
    const policyFile = join(c.dir, "policy.yaml");
    // First a policy that only asks (it answers nobody's gates), to learn the conversation…
    await writeFile(policyFile, "version: 1\ndefault: ask\n");
    const w = await serve((socket) => ["-L", socket, "--refresh-ms", "300", "--policy", policyFile, ...c.args]);
    // …then one that approves pwd in this conversation only.
    await writeFile(
      policyFile,
      `version: 1\ndefault: ask\nrules:\n  - id: read-only\n    kind: command\n    commands: ["pwd"]\n    conversations: ["${w.conversationId}"]\n    action: approve\n`,
    );
    await w.restartServe();
    const turn = (text: string) => w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text }) });
    await turn("Run pwd");
    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    const approved = await until(
      async () => (await readAuditLog(audit)).records.find((r) => r.decidedBy === "policy:read-only" && r.delivery === "delivered"),
      "the policy to approve pwd",
      { ms: 30_000, everyMs: 100 },
    );
    await until(
      async () =>
        ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: unknown[] }).pending.length === 0 ? true : undefined,
      "nothing pending",
      { ms: 30_000, everyMs: 100 },
    );
    await turn("Delete the build directory");
    const [first] = hooksOf(await c.hook.until((r) => hooksOf(r, w).length >= 1, "a webhook for the request the policy asked about", 30_000), w);
    expect(bodyOf(first!).request).toMatchObject({ kind: "permission", target: expect.stringContaining("rm") });
    await c.telegram.until(() => c.telegram.messages.find((m) => m.text.includes(bodyOf(first!).interactionId)), "the Telegram message for it", 30_000);
    // pwd, answered by the policy, reached no channel.
    expect(c.hook.requests.map(bodyOf).map((b) => b.interactionId)).not.toContain(approved.interactionId);
    expect(c.telegram.messages.filter((m) => m.text.includes(approved.interactionId!))).toEqual([]);
  });

  it("answers from an ntfy Deny button with its one-time token, which then stops working", async () => {
    const ntfy = await startRecordingServer();
    cleanup.push(() => ntfy.close());
    const w = await serve((socket) => ["-L", socket, "--refresh-ms", "300", "--notify-ntfy", `${ntfy.url}/agy-topic`]);
    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    const waiting = await until(
      async () => ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: Array<{ interactionId: string }> }).pending[0],
      "the gate",
      { ms: 30_000, everyMs: 100 },
    );
    type Published = {
      topic: string;
      title: string;
      click: string;
      actions?: Array<{ label: string; url: string; method: string; headers: { Authorization: string } }>;
    };
    const published = (r: Recorded[]) =>
      r.map((x) => JSON.parse(x.body.toString("utf8")) as Published).filter((m) => m.click.endsWith(`/#/interactions/${waiting.interactionId}`));
    const [message] = published(await ntfy.until((r) => published(r).length >= 1, "the ntfy message", 30_000));
    expect(message!.topic).toBe("agy-topic");
    expect(message!.actions!.map((a) => a.label)).toEqual(["Approve", "Deny"]);
    const deny = message!.actions!.find((a) => a.label === "Deny")!;
    expect(deny.url).toBe(`${w.url}/v1/actions`);
    expect(JSON.stringify(message)).not.toContain(w.token);
    const first = await fetch(deny.url, { method: deny.method, headers: { authorization: deny.headers.Authorization } });
    expect(first.status).toBe(200);
    const again = await fetch(deny.url, { method: deny.method, headers: { authorization: deny.headers.Authorization } });
    expect(again.status).toBe(401);
    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    const denied = await until(
      async () => (await readAuditLog(audit)).records.find((r) => r.decidedBy === "ntfy" && r.interactionId === waiting.interactionId),
      "the ntfy answer in the audit log",
      { ms: 30_000, everyMs: 100 },
    );
    expect(denied).toMatchObject({ decision: "deny", delivery: "delivered", request: { commandLine: "pwd" } });
    await ntfy.until((r) => published(r).some((m) => m.title === "Denied by ntfy"), "the resolution message", 30_000);
  });

  it("tells the person again after --escalate-after, as announced in the first notice", async () => {
    const c = await channels();
    const w = await serve((socket) => ["-L", socket, "--refresh-ms", "300", ...c.args, "--escalate-after", "2s"]);
    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    const [pending] = hooksOf(await c.hook.until((r) => hooksOf(r, w).length >= 1, "the pending webhook", 30_000), w);
    const { interactionId, url } = bodyOf(pending!);
    const mine = () => c.telegram.messages.filter((m) => m.text.includes(url));
    const [first] = await c.telegram.until(() => (mine().length >= 1 ? mine() : undefined), "the Telegram message", 30_000);
    expect(first!.text).toContain("If nobody answers within 2s, you will be reminded.");
    const [, reminder] = await c.telegram.until(() => (mine().length >= 2 ? mine() : undefined), "the reminder", 30_000);
    expect(reminder!.text).toMatch(/^Still waiting: agy asks to run a command/);
    const reminded = await c.hook.until(
      (r) => hooksOf(r, w).filter((x) => bodyOf(x).interactionId === interactionId && bodyOf(x).type === "interaction.pending").length >= 2,
      "the reminder webhook",
      30_000,
    );
    expect(new Set(hooksOf(reminded, w).map((x) => bodyOf(x).id)).size).toBe(hooksOf(reminded, w).length);
    // Answered: both messages are edited, and the reminders stop.
    await w.api(`/v1/sessions/${w.conversationId}/interactions/${interactionId}`, { method: "POST", body: JSON.stringify({ action: "approve" }) });
    await c.telegram.until(() => (mine().every((m) => m.history.length >= 2) ? true : undefined), "every message to be edited", 30_000);
    expect(mine().map((m) => m.text.endsWith("Approved by http:default."))).toEqual(mine().map(() => true));
  });
});
