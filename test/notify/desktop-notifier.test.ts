/**
 * The freedesktop desktop alerts against a real `dbus-daemon` session bus
 * (private, per test) and a stand-in notification server on it: what
 * `Notify` carries, actions only where the server offers them, an action
 * answering once through the callback, and the alert withdrawn when the
 * request is answered elsewhere — unless the server closed it already.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { InteractionRequest } from "../../src/mapper/index.js";
import { AgyBridgeError } from "../../src/errors.js";
import {
  checkFreedesktopServer,
  createFreedesktopNotifier,
  type AnswerInteraction,
  type AnswerOutcome,
  type InteractionAction,
  type PendingNotice,
} from "../../src/notify/index.js";
import dbus from "@particle/dbus-next";
import { until } from "../support/until.js";
import { connectBus, startNotificationsStandIn, startPrivateBus, type NotificationsStandIn, type PrivateBus } from "./support/dbus-session.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const CONVERSATION = "cca36945-1f2e-4d3c-8b7a-000000000001";

function pendingNotice(request: InteractionRequest, interactionId = "int_1", more: Partial<PendingNotice> = {}): PendingNotice {
  return {
    conversationId: CONVERSATION,
    interactionId,
    request,
    url: `http://127.0.0.1:7878/#/interactions/${interactionId}`,
    host: "devbox",
    escalated: false,
    ...more,
  };
}

const command = (target: string): InteractionRequest => ({ kind: "permission", action: "command", target, description: "" });

interface Answered {
  conversationId: string;
  interactionId: string;
  action: InteractionAction;
  decidedBy: string;
}

async function world(options: { capabilities?: string[]; pressOnNotify?: string } = {}) {
  const bus: PrivateBus = await startPrivateBus();
  cleanup.push(() => bus.close());
  const server: NotificationsStandIn = await startNotificationsStandIn(bus.address, options);
  cleanup.push(() => server.close());
  const answers: Answered[] = [];
  const problems: string[] = [];
  let outcome: AnswerOutcome = { result: "delivered" };
  const answer: AnswerInteraction = async (conversationId, interactionId, action, decidedBy) => {
    answers.push({ conversationId, interactionId, action, decidedBy });
    return outcome;
  };
  const notifier = createFreedesktopNotifier({
    busAddress: bus.address,
    answer,
    answerOn: "page",
    workspaceOf: () => "/home/ana/my-app",
    onProblem: (m) => problems.push(m),
  });
  cleanup.push(() => notifier.close());
  return { bus, server, notifier, answers, problems, setOutcome: (o: AnswerOutcome) => (outcome = o) };
}

/**
 * Every signal the server sent before this has been handled by the notifier once it returns: a
 * press on a fresh alert, sent after them by the same connection, has been answered.
 */
async function drained(w: Awaited<ReturnType<typeof world>>): Promise<void> {
  const id = `int_drain_${w.answers.length}_${Math.random().toString(36).slice(2)}`;
  w.notifier.pending(pendingNotice(command("true"), id));
  const shown = await w.server.untilNotified((n) => n.body === "true", "the drain alert");
  w.server.invoke(shown.id, "approve");
  await until(() => w.answers.some((a) => a.interactionId === id), "the drain press");
  w.answers.splice(
    w.answers.findIndex((a) => a.interactionId === id),
    1,
  );
}

describe("desktop alerts over D-Bus", { timeout: 60_000 }, () => {
  it("shows a waiting command with its session, kind and command line, and Approve / Deny when the server offers actions", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("npm test -- --watch")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    expect(shown).toMatchObject({
      appName: "agy-bridge",
      replacesId: 0,
      summary: "agy cca36945 in my-app: permission",
      body: "npm test -- --watch",
      actions: ["approve", "Approve", "deny", "Deny"],
      expireTimeout: 0,
    });
    expect(w.server.calls).toContain("GetCapabilities");
  });

  it("answers a pressed Approve once through the callback, as desktop, however often the signal comes", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("pwd")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    w.server.invoke(shown.id, "approve");
    w.server.invoke(shown.id, "approve");
    w.server.invoke(shown.id, "deny");
    await drained(w);
    expect(w.answers).toEqual([{ conversationId: CONVERSATION, interactionId: "int_1", action: { action: "approve" }, decidedBy: "desktop" }]);
  });

  it("answers a press that reaches it together with the Notify reply, before the alert's id is known", async () => {
    const w = await world({ pressOnNotify: "approve" });
    w.notifier.pending(pendingNotice(command("pwd")));
    await w.server.untilNotified(() => true, "the alert");
    await until(() => w.answers.length >= 1 || undefined, "the press sent with the reply", { seen: () => JSON.stringify(w.problems) });
    await drained(w);
    expect(w.answers).toEqual([{ conversationId: CONVERSATION, interactionId: "int_1", action: { action: "approve" }, decidedBy: "desktop" }]);
  });

  it("believes no ActionInvoked from another bus name, nor one for an id it did not show", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("rm -rf build")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    const forger = await connectBus(w.bus.address);
    cleanup.push(async () => forger.disconnect());
    forger.send(dbus.Message.newSignal("/org/freedesktop/Notifications", "org.freedesktop.Notifications", "ActionInvoked", "us", [shown.id, "approve"]));
    // The bus has routed the forged signal once it answers the forger's next call: it reaches the notifier first.
    await forger.call(
      new dbus.Message({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId" }),
    );
    w.server.invoke(shown.id + 1000, "approve");
    // A real press after them is answered: the two before it were seen first, and ignored.
    w.server.invoke(shown.id, "deny");
    await until(() => w.answers.length >= 1, "the real press");
    expect(w.answers.map((a) => a.action)).toEqual([{ action: "deny" }]);
  });

  it("withdraws the alert with CloseNotification when the request is answered elsewhere", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("pwd")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    w.notifier.resolved({ ...pendingNotice(command("pwd")), outcome: "approved", decidedBy: "cli" });
    await until(() => w.server.closed.includes(shown.id), "CloseNotification", { seen: () => JSON.stringify(w.server.calls) });
    expect(w.server.closed).toEqual([shown.id]);
  });

  it("does not close an alert the person dismissed, and a press after the resolution answers nothing", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("pwd"), "int_a"));
    w.notifier.pending(pendingNotice(command("ls"), "int_b"));
    const a = await w.server.untilNotified((n) => n.body === "pwd", "the first alert");
    const b = await w.server.untilNotified((n) => n.body === "ls", "the second alert");
    w.server.dismiss(a.id);
    // The dismissal is on the bus before this round trip's answer: then resolve both.
    w.notifier.pending(pendingNotice(command("whoami"), "int_c"));
    await w.server.untilNotified((n) => n.body === "whoami", "a third alert");
    w.notifier.resolved({ ...pendingNotice(command("pwd"), "int_a"), outcome: "approved" });
    w.notifier.resolved({ ...pendingNotice(command("ls"), "int_b"), outcome: "denied" });
    await until(() => w.server.closed.includes(b.id), "the second alert withdrawn");
    w.server.invoke(b.id, "approve");
    await drained(w);
    expect(w.server.closed).not.toContain(a.id);
    expect(w.answers).toEqual([]);
  });

  it("offers no actions when the server lists none, and says where to answer instead", async () => {
    const w = await world({ capabilities: ["body"] });
    w.notifier.pending(pendingNotice(command("pwd")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    expect(shown.actions).toEqual([]);
    expect(shown.body).toBe("pwd\n\nApprove or deny it on the page: http://127.0.0.1:7878/#/interactions/int_1");
  });

  it("gives a question no Approve / Deny, with its options and where to answer it", async () => {
    const w = await world();
    w.notifier.pending(
      pendingNotice({
        kind: "question",
        questions: [
          {
            question: "Which database?",
            options: [
              { id: "1", text: "Postgres" },
              { id: "2", text: "SQLite" },
            ],
            multiSelect: false,
          },
        ],
      }),
    );
    const shown = await w.server.untilNotified(() => true, "the alert");
    expect(shown.summary).toBe("agy cca36945 in my-app: question");
    expect(shown.actions).toEqual([]);
    expect(shown.body).toBe("Which database?\n• Postgres\n• SQLite\n\nAnswer it on the page: http://127.0.0.1:7878/#/interactions/int_1");
  });

  it("shows a file request by its path in the workspace", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice({ kind: "permission", action: "file", target: "file:///home/ana/my-app/src/app.ts", description: "" }));
    const shown = await w.server.untilNotified(() => true, "the alert");
    expect(shown.summary).toBe("agy cca36945 in my-app: file");
    expect(shown.body).toBe("src/app.ts");
  });

  it("strips control and bidi characters, bounds the body, and escapes it for a server that reads markup", async () => {
    const w = await world({ capabilities: ["actions", "body", "body-markup"] });
    const hostile = `echo "\u001b]8;;http://evil\u0007<b>ok</b>" \u202e && ${"x".repeat(2000)}`;
    w.notifier.pending(pendingNotice(command(hostile)));
    const shown = await w.server.untilNotified(() => true, "the alert");
    expect(shown.body).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/u);
    expect(shown.body.startsWith('echo "]8;;http://evil&lt;b&gt;ok&lt;/b&gt;"  &amp;&amp; xxx')).toBe(true);
    expect(shown.body.length).toBeLessThan(500);
    expect(shown.body.endsWith("…")).toBe(true);
  });

  it("replaces the alert with the escalation's reminder instead of adding one", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("pwd")));
    const first = await w.server.untilNotified(() => true, "the alert");
    w.notifier.pending(pendingNotice(command("pwd"), "int_1", { escalated: true, escalation: "If nobody answers within 5m, you will be reminded." }));
    const reminder = await w.server.untilNotified((n) => n.replacesId !== 0, "the reminder");
    expect(reminder).toMatchObject({ replacesId: first.id, id: first.id, summary: "Still waiting — agy cca36945 in my-app: permission" });
    expect(reminder.body).toBe("pwd\n\nIf nobody answers within 5m, you will be reminded.");
  });

  it("says so when a pressed answer was not delivered, and lets the person press again", async () => {
    const w = await world();
    w.setOutcome({ result: "timed_out" });
    w.notifier.pending(pendingNotice(command("pwd")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    w.server.invoke(shown.id, "approve");
    await until(() => w.problems.length >= 1, "the problem");
    expect(w.problems[0]).toBe("desktop: the approve pressed on the desktop for interaction int_1 was not delivered (timed_out)");
    w.setOutcome({ result: "delivered" });
    w.server.invoke(shown.id, "approve");
    await until(() => w.answers.length >= 2, "the second press");
  });

  it("withdraws the alerts still open when it closes: their buttons would answer nothing", async () => {
    const w = await world();
    w.notifier.pending(pendingNotice(command("pwd")));
    const shown = await w.server.untilNotified(() => true, "the alert");
    await w.notifier.close();
    expect(w.server.closed).toEqual([shown.id]);
  });

  it("refuses at startup, with a sentence, a bus on which no notification server runs", async () => {
    const bus = await startPrivateBus();
    cleanup.push(() => bus.close());
    const error = await checkFreedesktopServer({ busAddress: bus.address }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgyBridgeError);
    expect((error as Error).message).toMatch(
      /^no notification server is on the session bus \(nothing owns org\.freedesktop\.Notifications\): start your desktop's notification daemon/,
    );
  });

  it("refuses at startup a bus address nobody listens on", async () => {
    const error = await checkFreedesktopServer({ busAddress: "unix:path=/nonexistent/agyb-bus" }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^the session bus in DBUS_SESSION_BUS_ADDRESS could not be used for desktop alerts \(.*ENOENT.*\): check that the variable names your desktop session's bus$/,
    );
  });

  it("names the server and whether it offers actions at startup", async () => {
    const bus = await startPrivateBus();
    cleanup.push(() => bus.close());
    const server = await startNotificationsStandIn(bus.address, { capabilities: ["body"], serverName: "dunst" });
    cleanup.push(() => server.close());
    expect(await checkFreedesktopServer({ busAddress: bus.address })).toEqual({ name: "dunst", actions: false });
  });
});
