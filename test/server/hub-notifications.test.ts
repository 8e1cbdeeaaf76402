/**
 * serve's notifications over its hub (server/hub-notifications.ts), built
 * from a plan as the CLI builds it, over a real event log: with a session
 * policy, a person is told of exactly the requests whose verdict (written on
 * the request) is `ask` — those the log held before the channels started
 * included — and never of one the policy approved; each webhook delivery is
 * in the audit log, naming its request.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createAuditLog, readAuditLog } from "../../src/audit/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createActionTokens, generateVapidKeys, openPushSubscriptionStore } from "../../src/notify/index.js";
import { createEventLog } from "../../src/server/event-log.js";
import { createHubNotifications } from "../../src/server/hub-notifications.js";
import type { SessionHub } from "../../src/server/index.js";
import { startRecordingServer } from "../notify/support/recording-server.js";
import { until } from "../support/until.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A permission request with the session policy's verdict written on it, as the session publishes it. */
function requested(n: number, decision: "ask" | "approve"): Requested {
  return {
    type: "interaction_requested",
    conversationId: "conv-1",
    trajectoryId: "traj-1",
    stepIndex: n,
    interactionId: `int_${n}`,
    stepType: "RUN_COMMAND",
    callId: `call_${n}`,
    request: { kind: "permission", action: "command", target: `make test-${n}`, description: "" },
    policy: { decision, rule: decision === "ask" ? null : "r1" },
  } as Requested;
}

const idsAt = (requests: { body: Buffer }[]) => requests.map((r) => (JSON.parse(r.body.toString("utf8")) as { interactionId?: string }).interactionId).sort();

it("tells a person of the requests the policy asked about, those logged before the channels started included, and audits each delivery", async () => {
  const webhook = await startRecordingServer();
  cleanups.push(() => webhook.close());
  const dir = mkdtempSync(join(tmpdir(), "agyb-hub-notify-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const auditFile = join(dir, "audit.jsonl");
  const problems: string[] = [];
  const notifications = createHubNotifications({
    webhooks: [{ url: `${webhook.url}/hook`, secret: "s3cret-for-the-test-0123456789" }],
    push: { keys: generateVapidKeys(), store: await openPushSubscriptionStore(join(dir, "push.json")), allowLoopback: false },
    policy: true,
    actions: createActionTokens(),
    host: "test-host",
    auditLog: createAuditLog({ path: auditFile }),
    onProblem: (message) => problems.push(message),
  });
  cleanups.push(() => notifications.close());

  // The hub attached, and its session logged what the policy decided, before serve listened.
  const log = createEventLog({ epoch: "e1" });
  log.append(requested(3, "ask"));
  log.append(requested(4, "approve"));
  log.append({ type: "history_end", conversationId: "conv-1" });
  const session = { conversationId: "conv-1", log, respond: async () => ({ result: "delivered" }) };
  const hub = { list: () => [session], onChange: () => () => undefined, get: () => session } as unknown as SessionHub;
  notifications.start({ hub, pageUrl: "http://127.0.0.1:9" });
  await webhook.until((r) => r.length >= 1, "the ask logged before start at the webhook");

  log.append(requested(5, "ask"));
  log.append(requested(6, "approve"));
  await webhook.until((r) => r.length >= 2, "the live ask at the webhook");
  const lines = await until(async () => {
    const { records } = await readAuditLog(auditFile);
    return records.length >= 2 ? records : undefined;
  }, "the two delivery lines in the audit log");
  expect(lines.map((r) => [r.interactionId, r.decision, r.decidedBy, r.delivery, r.request]).sort()).toEqual([
    ["int_3", "notify", "webhook:1", "delivered", { commandLine: "make test-3" }],
    ["int_5", "notify", "webhook:1", "delivered", { commandLine: "make test-5" }],
  ]);
  // What the policy approved (4, 6) reached no one: by the time both asks are audited, nothing else came.
  expect(idsAt(webhook.requests)).toEqual(["int_3", "int_5"]);
  expect(problems).toEqual([]);
});
