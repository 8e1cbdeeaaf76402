/**
 * `agy-bridge serve --notify-desktop` end to end: the simulator as agy in a
 * real tmux pane, found by serve's discovery; serve on a private
 * `dbus-daemon` session bus with a stand-in notification server. A press on
 * the alert answers through serve's hub as `desktop`, once; an answer from
 * the page withdraws the alert.
 *
 * serve supervises every agy on the machine, other tests' simulators too:
 * only this test's conversation's alerts are looked at or pressed.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { startServeWorld, type ServeWorld } from "../server/support/serve-world.js";
import { until } from "../support/until.js";
import { startNotificationsStandIn, startPrivateBus } from "./support/dbus-session.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serveOnBus(address: string): Promise<ServeWorld> {
  // serve's environment is this process's (serve-process.ts): the bus address is set only while it starts.
  const before = process.env["DBUS_SESSION_BUS_ADDRESS"];
  process.env["DBUS_SESSION_BUS_ADDRESS"] = address;
  try {
    const world = await startServeWorld({ serveArgs: (tmux) => ["-L", tmux.socketName, "--refresh-ms", "300", "--notify-desktop"] });
    cleanup.push(() => world.close());
    return world;
  } finally {
    if (before === undefined) delete process.env["DBUS_SESSION_BUS_ADDRESS"];
    else process.env["DBUS_SESSION_BUS_ADDRESS"] = before;
  }
}

describe("serve --notify-desktop", { timeout: 120_000 }, () => {
  it("alerts a waiting command; a press approves it through the hub once, and an answer from the page withdraws the next alert", async () => {
    const bus = await startPrivateBus();
    cleanup.push(() => bus.close());
    const server = await startNotificationsStandIn(bus.address);
    cleanup.push(() => server.close());
    const w = await serveOnBus(bus.address);
    expect(w.stderr()).toContain("agy-bridge serve: desktop alerts go to stand-in (with Approve / Deny)");
    const ours = `agy ${w.conversationId.slice(0, 8)}`;

    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    const first = await server.untilNotified((n) => n.summary.startsWith(ours) && n.body.includes("pwd"), "the alert for pwd", 60_000);
    expect(first.summary).toMatch(new RegExp(`^${ours}( in [^:]+)?: permission$`));
    expect(first.actions).toEqual(["approve", "Approve", "deny", "Deny"]);
    server.invoke(first.id, "approve");
    server.invoke(first.id, "approve");

    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    const approvals = async () =>
      (await readAuditLog(audit).catch(() => ({ records: [] }))).records.filter((r) => r.conversationId === w.conversationId && r.decision === "approve");
    await until(async () => (await approvals()).some((r) => r.decidedBy === "desktop"), "the desktop's approval in the audit log", {
      ms: 30_000,
      seen: w.stderr,
    });
    await until(() => server.closed.includes(first.id), "the answered alert withdrawn", { ms: 30_000, seen: () => JSON.stringify(server.calls) });
    expect((await approvals()).map((r) => [r.decidedBy, r.delivery])).toEqual([["desktop", "delivered"]]);

    // The next request, answered on the page: its alert is withdrawn.
    const pendingNow = async () =>
      ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: { interactionId: string }[] }).pending;
    const idle = async () => (await pendingNow()).length === 0;
    await until(idle, "the first request to be over", { ms: 30_000 });
    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    const second = await server.untilNotified((n) => n.summary.startsWith(ours) && n.id !== first.id, "the second alert", 60_000);
    const pending = await until(async () => (await pendingNow())[0], "the second request on the API", { ms: 30_000 });
    const page = await w.api(`/v1/sessions/${w.conversationId}/interactions/${pending.interactionId}`, {
      method: "POST",
      headers: { "x-agy-bridge-client": "page" },
      body: JSON.stringify({ action: "deny" }),
    });
    expect(page.status).toBe(200);
    await until(() => server.closed.includes(second.id), "the second alert withdrawn", { ms: 30_000, seen: () => JSON.stringify(server.calls) });
  });
});
