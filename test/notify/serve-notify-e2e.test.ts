/**
 * Notifications end to end: the simulator as agy in a real tmux pane, found
 * by `agy-bridge serve`, which tells a webhook receiver, a push service and a
 * Telegram Bot API — stand-ins on loopback that check what a real one would
 * (the signature, the VAPID JWT and RFC 8291 decryption, the Bot API calls).
 * Answered from one channel, the interaction resolves in all of them, and
 * agy gets exactly one answer.
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { verifyWebhook } from "../../src/notify/index.js";
import { startServeWorld, until, type ServeWorld } from "../server/support/serve-world.js";
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

const bodyOf = (r: Recorded) => JSON.parse(r.body.toString("utf8")) as WebhookBody;
const signedOk = (r: Recorded) =>
  verifyWebhook(SECRET, { timestamp: r.headers["x-agy-bridge-timestamp"] as string, signature: r.headers["x-agy-bridge-signature"] as string }, r.body.toString("utf8"), Math.floor(Date.now() / 1000));

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
  const args = ["--notify-webhook", `${hook.url}/agy`, "--notify-webhook-secret-file", join(dir, "secret"), "--telegram-bot-token-file", join(dir, "bot-token"), "--telegram-chat", String(CHAT), "--telegram-api-root", telegram.apiRoot];
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

    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    // The webhook: signed, the documented body, a deep link to the card.
    const [pending] = await c.hook.until((r) => r.length >= 1, "the pending webhook", 30_000);
    expect(signedOk(pending!)).toBe(true);
    const body = bodyOf(pending!);
    expect(body).toMatchObject({ type: "interaction.pending", outcome: null, request: { kind: "permission", target: "pwd" } });
    expect(body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/#/interactions/${body.interactionId}$`));
    // The push: VAPID from serve's key, a payload only this browser can read.
    const [pushed] = await c.push.until((r) => r.length >= 1, "the push", 30_000);
    expect(verifyVapid(pushed!.headers.authorization, key).aud).toBe(c.push.url);
    expect(JSON.parse(browser.decrypt(pushed!.body))).toMatchObject({ type: "interaction.pending", interactionId: body.interactionId, body: expect.stringContaining("pwd"), url: body.url });
    // Telegram: a message with buttons.
    const message = await c.telegram.until(() => c.telegram.messages[0], "the Telegram message", 30_000);
    expect(message.text).toContain("pwd");
    const approve = message.reply_markup!.inline_keyboard.flat().find((b) => b.text === "Approve")!;

    // Two people at once: a press in Telegram and an approval from the page.
    const press = c.telegram.press(CHAT, message.message_id, approve.callback_data!);
    const page = await w.api(`/v1/sessions/${w.conversationId}/interactions/${body.interactionId}`, { method: "POST", headers: { "x-agy-bridge-client": "page" }, body: JSON.stringify({ action: "approve" }) });
    const pressAnswer = await c.telegram.until(() => c.telegram.callbackAnswers.get(press), "Telegram's answer to the press", 30_000);
    const results = [page.status === 200 ? "delivered" : "refused", pressAnswer === "Sent to agy." ? "delivered" : "refused"];
    expect(results.filter((r) => r === "delivered"), `page ${page.status}, telegram "${pressAnswer}"`).toHaveLength(1);

    // Resolved everywhere.
    const resolved = await c.hook.until((r) => r.some((x) => bodyOf(x).type === "interaction.resolved"), "the resolution webhook", 30_000);
    const resolution = resolved.map(bodyOf).find((b) => b.type === "interaction.resolved")!;
    expect(resolution).toMatchObject({ interactionId: body.interactionId, outcome: "approved" });
    expect(resolution.id).not.toBe(body.id);
    expect(resolved.every(signedOk)).toBe(true);
    await c.telegram.until(() => (message.history.length >= 2 ? true : undefined), "the Telegram message to be edited", 30_000);
    expect(message.text).toMatch(/Approved by (page|telegram:ana)\./);
    expect(message.reply_markup).toBeUndefined();
    const pushes = await c.push.until((r) => r.length >= 2, "the resolution push", 30_000);
    expect(pushes.map((p) => (JSON.parse(browser.decrypt(p.body)) as { type: string }).type)).toContain("interaction.resolved");

    // Exactly one answer reached agy, and the audit log says which; the webhook deliveries are there too.
    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    const records = await until(async () => {
      const { records } = await readAuditLog(audit);
      return records.filter((r) => r.decision === "notify").length >= 2 ? records : undefined;
    }, "the webhook deliveries in the audit log", 30_000);
    const answers = records.filter((r) => r.interactionId === body.interactionId && r.decision === "approve");
    expect(answers.filter((r) => r.delivery === "delivered"), JSON.stringify(answers)).toHaveLength(1);
    expect(records.filter((r) => r.decision === "notify").map((r) => [r.decidedBy, r.delivery])).toEqual([["webhook:1", "delivered"], ["webhook:1", "delivered"]]);
    expect(w.stderr()).not.toContain(BOT_TOKEN);
    expect(w.stderr()).not.toContain(SECRET);
  });

  it("with a policy, tells people only of what the policy leaves to them", async () => {
    const c = await channels();
    const policyFile = join(c.dir, "policy.yaml");
    await writeFile(policyFile, "version: 1\ndefault: ask\nrules:\n  - id: read-only\n    kind: command\n    commands: [\"pwd\"]\n    action: approve\n");
    const w = await serve((socket) => ["-L", socket, "--refresh-ms", "300", "--policy", policyFile, ...c.args]);
    const turn = (text: string) => w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text }) });
    await turn("Run pwd");
    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    await until(async () => ((await readAuditLog(audit)).records.some((r) => r.decidedBy === "policy:read-only" && r.delivery === "delivered") ? true : undefined), "the policy to approve pwd", 30_000);
    await until(async () => ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: unknown[] }).pending.length === 0 ? true : undefined, "nothing pending", 30_000);
    await turn("Delete the build directory");
    const [first] = await c.hook.until((r) => r.length >= 1, "a webhook for the request the policy asked about", 30_000);
    expect(bodyOf(first!).request).toMatchObject({ kind: "permission", target: expect.stringContaining("rm") });
    // pwd, answered by the policy, reached no channel.
    expect(c.hook.requests.map((r) => bodyOf(r).request.target)).not.toContain("pwd");
    expect(c.telegram.messages.map((m) => m.text).join("\n")).not.toMatch(/\npwd\n/);
  });
});
