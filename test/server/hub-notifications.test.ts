/**
 * serve's notifications over its hub (server/hub-notifications.ts), built
 * from a plan as the CLI builds it: a policy verdict whose answer was never
 * sent (an approve rule matching a question) that comes before the channels
 * start waits for them (bounded, with a sentence for what is dropped), then
 * goes to the webhook — a loopback receiver here — with the audit line of its
 * delivery naming the request. A policy's `ask` is not handed over here: the
 * dispatcher reads it off the request in the session's log.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createAuditLog, readAuditLog } from "../../src/audit/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createActionTokens, generateVapidKeys, openPushSubscriptionStore } from "../../src/notify/index.js";
import { createHubNotifications, type HubNotificationsPlan } from "../../src/server/hub-notifications.js";
import type { SessionHub } from "../../src/server/index.js";
import type { PolicyOutcome } from "../../src/session/index.js";
import { startRecordingServer, type RecordingServer } from "../notify/support/recording-server.js";
import { until } from "../support/until.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The policy approved interaction `n`, and its answer was never sent (no result, no error). */
function undelivered(n: number, decision: "approve" | "ask" = "approve"): PolicyOutcome {
  const request = {
    type: "interaction_requested",
    conversationId: "conv-1",
    trajectoryId: "traj-1",
    stepIndex: n,
    interactionId: `int_${n}`,
    stepType: "RUN_COMMAND",
    callId: `call_${n}`,
    request: { kind: "permission", action: "command", target: `make test-${n}`, description: "" },
    policy: { decision, rule: "r1" },
  } as Requested;
  return { request, decision: { decision, rule: "r1" } as unknown as PolicyOutcome["decision"], decidedBy: "policy:r1" };
}

/** A hub with no sessions: what the channels need of it before any session is followed. */
const emptyHub = { list: () => [], onChange: () => () => undefined, get: () => undefined } as unknown as SessionHub;

async function plan(webhook: RecordingServer | undefined, problems: string[]): Promise<{ plan: HubNotificationsPlan; auditFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), "agyb-hub-notify-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const auditFile = join(dir, "audit.jsonl");
  return {
    auditFile,
    plan: {
      webhooks: webhook === undefined ? [] : [{ url: `${webhook.url}/hook`, secret: "s3cret-for-the-test-0123456789" }],
      push: { keys: generateVapidKeys(), store: await openPushSubscriptionStore(join(dir, "push.json")), allowLoopback: false },
      policy: true,
      actions: createActionTokens(),
      host: "test-host",
      auditLog: createAuditLog({ path: auditFile }),
      onProblem: (message) => problems.push(message),
    },
  };
}

it("keeps undelivered verdicts until the channels start, then sends them, with the delivery in the audit log", async () => {
  const webhook = await startRecordingServer();
  cleanups.push(() => webhook.close());
  const problems: string[] = [];
  const { plan: p, auditFile } = await plan(webhook, problems);
  const notifications = createHubNotifications(p);
  cleanups.push(() => notifications.close());
  notifications.policyDecided(undelivered(3));
  notifications.policyDecided(undelivered(4, "ask"));
  notifications.policyDecided(undelivered(5));
  expect(webhook.requests).toHaveLength(0);
  notifications.start({ hub: emptyHub, pageUrl: "http://127.0.0.1:9" });
  const got = await webhook.until((r) => r.length >= 2, "both undelivered verdicts at the webhook");
  const ids = got.map((r) => (JSON.parse(r.body.toString("utf8")) as { interactionId?: string }).interactionId);
  // Two deliveries run at once: their order at the receiver is not the point. The ask (4) is the log's to tell.
  expect(ids.sort()).toEqual(["int_3", "int_5"]);
  const lines = await until(async () => {
    const { records } = await readAuditLog(auditFile);
    return records.length >= 2 ? records : undefined;
  }, "the two delivery lines in the audit log");
  expect(lines.map((r) => [r.interactionId, r.decision, r.decidedBy, r.delivery, r.request]).sort()).toEqual([
    ["int_3", "notify", "webhook:1", "delivered", { commandLine: "make test-3" }],
    ["int_5", "notify", "webhook:1", "delivered", { commandLine: "make test-5" }],
  ]);
  // All three were started at once at start(): by the time two deliveries are audited, a third would be there too.
  expect(webhook.requests).toHaveLength(2);
  expect(problems).toEqual([]);
});

it("keeps at most 1,000 undelivered verdicts before the channels start and says which one it dropped", async () => {
  const problems: string[] = [];
  const { plan: p } = await plan(undefined, problems);
  const notifications = createHubNotifications(p);
  cleanups.push(() => notifications.close());
  for (let n = 1; n <= 1001; n++) notifications.policyDecided(undelivered(n));
  expect(problems).toHaveLength(1);
  expect(problems[0]).toContain("interaction int_1 is not notified");
});
