/**
 * ntfy: the message an ntfy server receives, and its Approve / Deny buttons
 * calling serve's `/v1/actions` with one-time action tokens — good for one
 * interaction, one action, one use, and dead once the interaction is resolved.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createActionTokens, createNtfyNotifier, ntfyTarget, type Notifier } from "../../src/notify/index.js";
import type { RuleOffers } from "../../src/notify/rule-offer.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "../server/support/api-harness.js";
import { startLearnedWorld } from "./support/learned-world.js";
import { permissionNotice, questionNotice, resolvedOf } from "./support/notices.js";
import { startRecordingServer, type RecordingServer } from "./support/recording-server.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface NtfyAction {
  action: string;
  label: string;
  url: string;
  method: string;
  headers: { Authorization: string };
  clear: boolean;
}

async function world(rules?: RuleOffers): Promise<{ ntfy: RecordingServer; api: ApiHarness; notifier: Notifier }> {
  const tokens = createActionTokens();
  const api = await startApiHarness({ actions: tokens });
  cleanup.push(() => api.close());
  api.addSession("conv-1");
  await api.hub.refresh();
  const ntfy = await startRecordingServer();
  cleanup.push(() => ntfy.close());
  const notifier = createNtfyNotifier({
    topicUrl: `${ntfy.url}/agy-alerts`,
    apiUrl: api.url,
    tokens,
    retry: { firstRetryMs: 10 },
    ...(rules === undefined ? {} : { rules }),
  });
  cleanup.push(() => notifier.close());
  return { ntfy, api, notifier };
}

const act = (api: ApiHarness, authorization: string) => fetch(`${api.url}/v1/actions`, { method: "POST", headers: { authorization } });

describe("ntfy notifications", () => {
  it("publishes the request, a click to its card, and Approve / Deny actions that carry no API token", async () => {
    const { ntfy, notifier } = await world();
    notifier.pending(permissionNotice());
    const [request] = await ntfy.until((r) => r.length === 1, "the ntfy message");
    expect(request!.path).toBe("/");
    const message = JSON.parse(request!.body.toString("utf8")) as Record<string, unknown>;
    expect(message).toMatchObject({
      topic: "agy-alerts",
      title: "agy asks to run a command · permission",
      click: "http://127.0.0.1:7878/#/interactions/int_0123456789abcdef",
    });
    expect(message["message"]).toContain("npm test");
    const actions = message["actions"] as NtfyAction[];
    // No learned rules (serve without --policy): no Always allow / Always deny.
    expect(actions.map((a) => [a.action, a.label, a.method])).toEqual([
      ["http", "Approve", "POST"],
      ["http", "Deny", "POST"],
    ]);
    expect(message["message"]).not.toContain("Always");
    expect(actions[0]!.headers.Authorization).toMatch(/^Bearer act_[A-Za-z0-9_-]{43}$/);
    expect(actions[0]!.headers.Authorization).not.toBe(actions[1]!.headers.Authorization);
    expect(request!.body.toString("utf8")).not.toContain(TEST_TOKEN);
  });

  it("answers with the button's action once; the token then stops working", async () => {
    const { ntfy, api, notifier } = await world();
    notifier.pending(permissionNotice());
    const [request] = await ntfy.until((r) => r.length === 1, "the ntfy message");
    const [approve] = (JSON.parse(request!.body.toString("utf8")) as { actions: NtfyAction[] }).actions;
    const first = await act(api, approve!.headers.Authorization);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ result: "delivered" });
    expect(api.sessions.get("conv-1")!.answers).toEqual([{ interactionId: "int_0123456789abcdef", action: { action: "approve" } }]);
    const again = await act(api, approve!.headers.Authorization);
    expect(again.status).toBe(401);
    expect(api.sessions.get("conv-1")!.answers).toHaveLength(1);
  });

  it("kills the buttons' tokens once the interaction is resolved elsewhere", async () => {
    const { ntfy, api, notifier } = await world();
    const notice = permissionNotice();
    notifier.pending(notice);
    const [request] = await ntfy.until((r) => r.length === 1, "the ntfy message");
    const [, deny] = (JSON.parse(request!.body.toString("utf8")) as { actions: NtfyAction[] }).actions;
    notifier.resolved(resolvedOf(notice, "approved", "page"));
    const [, resolution] = await ntfy.until((r) => r.length === 2, "the resolution message");
    expect(JSON.parse(resolution!.body.toString("utf8"))).toMatchObject({ title: "Approved by page" });
    expect((await act(api, deny!.headers.Authorization)).status).toBe(401);
    expect(api.sessions.get("conv-1")!.answers).toEqual([]);
  });

  it("refuses the API token, a made-up token and a missing one at /v1/actions", async () => {
    const { api } = await world();
    expect((await act(api, `Bearer ${TEST_TOKEN}`)).status).toBe(401);
    expect((await act(api, "Bearer act_made-up")).status).toBe(401);
    expect((await fetch(`${api.url}/v1/actions`, { method: "POST" })).status).toBe(401);
    expect(api.sessions.get("conv-1")!.answers).toEqual([]);
  });

  it("gives a question no buttons: it is answered on the page the click opens", async () => {
    const { ntfy, notifier } = await world();
    notifier.pending(questionNotice());
    const [request] = await ntfy.until((r) => r.length === 1, "the ntfy message");
    const message = JSON.parse(request!.body.toString("utf8")) as Record<string, unknown>;
    expect(message["actions"]).toBeUndefined();
    expect(message["message"]).toContain("Which database?");
  });

  it("splits a topic URL into the server to publish to and the topic", () => {
    expect(ntfyTarget("https://ntfy.sh/agy-alerts")).toEqual({ publishUrl: "https://ntfy.sh/", topic: "agy-alerts" });
    expect(ntfyTarget("https://example.com/ntfy/agy")).toEqual({ publishUrl: "https://example.com/ntfy/", topic: "agy" });
    expect(() => ntfyTarget("https://ntfy.sh/")).toThrow(/topic URL/);
  });

  it("offers Always allow with the rule as it will be saved; its press answers, and the resolution saves the rule once and says so", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { ntfy, api, notifier } = await world(learned.offers);
    const notice = permissionNotice();
    notifier.pending(notice);
    const [request] = await ntfy.until((r) => r.length === 1, "the ntfy message");
    const message = JSON.parse(request!.body.toString("utf8")) as { message: string; actions: NtfyAction[] };
    expect(message.message).toContain("Always allow: `npm test` (this workspace)");
    expect(message.actions.map((a) => a.label)).toEqual(["Approve", "Deny", "Always allow"]);
    const always = message.actions[2]!;
    expect(always.headers.Authorization).toMatch(/^Bearer act_[A-Za-z0-9_-]{43}$/);
    expect(request!.body.toString("utf8")).not.toContain(TEST_TOKEN);
    const pressed = await act(api, always.headers.Authorization);
    expect(await pressed.json()).toMatchObject({ result: "delivered" });
    expect(api.sessions.get("conv-1")!.answers).toEqual([{ interactionId: "int_0123456789abcdef", action: { action: "approve" } }]);
    expect((await act(api, always.headers.Authorization)).status).toBe(401);
    // serve's hub resolves it as decided by ntfy: the rule is saved, and the follow-up says so.
    notifier.resolved(resolvedOf(notice, "approved", "ntfy"));
    const [, resolution] = await ntfy.until((r) => r.length === 2, "the resolution message");
    const resolved = JSON.parse(resolution!.body.toString("utf8")) as { title: string; message: string };
    expect(resolved.title).toBe("Approved by ntfy");
    expect(resolved.message).toContain("Approved; rule saved: Always allow: `npm test` (this workspace)");
    expect(learned.store.list()).toMatchObject([
      { decision: "approve", match: "npm test", scope: "workspace", addedBy: "ntfy", fromRequest: notice.interactionId },
    ]);
    expect(learned.decideCommand("npm test")).toMatchObject({ decision: "approve", rule: learned.store.list()[0]!.id });
  });

  it("saves no rule when the answer delivered was not the remembering press", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { ntfy, api, notifier } = await world(learned.offers);
    const plain = permissionNotice();
    notifier.pending(plain);
    const other = permissionNotice({ interactionId: "int_other", url: "http://127.0.0.1:7878/#/interactions/int_other" });
    notifier.pending(other);
    const published = await ntfy.until((r) => r.length === 2, "two ntfy messages");
    const actionsOf = (index: number) => (JSON.parse(published[index]!.body.toString("utf8")) as { actions: NtfyAction[] }).actions;
    // A plain Approve, resolved by ntfy: no rule.
    expect((await act(api, actionsOf(0)[0]!.headers.Authorization)).status).toBe(200);
    notifier.resolved(resolvedOf(plain, "approved", "ntfy"));
    // Always allow pressed, but the page's answer was the one delivered.
    await act(api, actionsOf(1)[2]!.headers.Authorization);
    notifier.resolved(resolvedOf(other, "approved", "page"));
    const done = await ntfy.until((r) => r.length === 4, "both resolution messages");
    expect(
      done
        .slice(2)
        .map((r) => (JSON.parse(r.body.toString("utf8")) as { message: string }).message)
        .join("\n"),
    ).not.toContain("rule saved");
    expect(learned.store.list()).toEqual([]);
  });

  it("offers Always deny as the third action when no rule may allow the request", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { ntfy, notifier } = await world(learned.offers);
    notifier.pending(permissionNotice({ request: { kind: "permission", action: "command", target: "eval foo", description: "" } }));
    const [request] = await ntfy.until((r) => r.length === 1, "the ntfy message");
    const message = JSON.parse(request!.body.toString("utf8")) as { message: string; actions: NtfyAction[] };
    expect(message.actions.map((a) => a.label)).toEqual(["Approve", "Deny", "Always deny"]);
    expect(message.message).toContain("Always deny: `eval foo` (this workspace)");
  });
});
