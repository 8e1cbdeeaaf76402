/**
 * A private D-Bus session bus for tests — Debian's real `dbus-daemon`, with
 * a configuration of our own (a session bus listening on a socket in the
 * test's directory, no service directories, so nothing on the machine is
 * ever activated) — and a stand-in `org.freedesktop.Notifications` service
 * on it, written with the same D-Bus library as the code under test: it
 * records `Notify` and `CloseNotification`, answers `GetCapabilities` and
 * `GetServerInformation`, and sends `ActionInvoked` and `NotificationClosed`
 * when the test says so.
 *
 * The daemon carries the run's mark in its environment, so the run's
 * watchdog (test/support/run-world.ts) ends it however the run ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import dbus from "@particle/dbus-next";
import type { Message, MessageBus } from "@particle/dbus-next";
import { firstLine } from "../../support/first-line.js";
import { until } from "../../support/until.js";

export interface PrivateBus {
  /** `unix:path=…,guid=…`, as `dbus-daemon --print-address` printed it. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startPrivateBus(): Promise<PrivateBus> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-dbus-"));
  const config = join(dir, "session.conf");
  await writeFile(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${join(dir, "bus")}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
  );
  const child: ChildProcess = spawn("dbus-daemon", [`--config-file=${config}`, "--nofork", "--print-address"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const spawnFailed = new Promise<never>((_, reject) =>
    child.once("error", (error) => reject(new Error(`dbus-daemon could not start (${error.message}); install Debian's dbus-daemon`))),
  );
  try {
    const address = (await Promise.race([firstLine(child.stdout!, "dbus-daemon", 15_000, () => `stderr: ${stderr}`), spawnFailed])).trim();
    return {
      address,
      async close() {
        child.kill("SIGTERM");
        await exited;
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Connects to a bus and waits for its `Hello` (the connection's unique name). */
export async function connectBus(address: string): Promise<MessageBus> {
  const bus = dbus.sessionBus({ busAddress: address });
  bus.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the private bus at ${address} did not answer Hello within 10 s`)), 10_000);
    bus.once("connect", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return bus;
}

export interface Notified {
  id: number;
  appName: string;
  replacesId: number;
  icon: string;
  summary: string;
  body: string;
  actions: string[];
  hints: Record<string, unknown>;
  expireTimeout: number;
}

export interface NotificationsStandIn {
  /** This service's unique bus name. */
  readonly name: string;
  /** Every call, by member, in order. */
  readonly calls: string[];
  readonly notified: Notified[];
  /** The ids `CloseNotification` was called with, in order. */
  readonly closed: number[];
  /** Sends `ActionInvoked(id, key)`, as a server does when a person presses a button. */
  invoke(id: number, key: string): void;
  /** Sends `NotificationClosed(id, reason)` (2: dismissed by the user). */
  dismiss(id: number, reason?: number): void;
  /** Waits for a `Notify` the predicate accepts. */
  untilNotified(predicate: (n: Notified) => boolean, what: string, ms?: number): Promise<Notified>;
  close(): Promise<void>;
}

const PATH = "/org/freedesktop/Notifications";
const IFACE = "org.freedesktop.Notifications";

export async function startNotificationsStandIn(
  address: string,
  options: {
    capabilities?: string[];
    serverName?: string;
    /** Presses this action in the same breath as the `Notify` reply (a server quicker than any person). */
    pressOnNotify?: string;
  } = {},
): Promise<NotificationsStandIn> {
  const bus = await connectBus(address);
  const granted = await bus.requestName(IFACE, dbus.NameFlag.DO_NOT_QUEUE);
  if (granted !== dbus.RequestNameReply.PRIMARY_OWNER) throw new Error(`the stand-in could not own ${IFACE} (reply ${granted})`);
  const capabilities = options.capabilities ?? ["actions", "body"];
  const calls: string[] = [];
  const notified: Notified[] = [];
  const closed: number[] = [];
  let nextId = 1;
  const signal = (member: string, signature: string, body: unknown[]) => bus.send(dbus.Message.newSignal(PATH, IFACE, member, signature, body));
  bus.addMethodHandler((message: Message) => {
    if (message.interface !== IFACE || message.path !== PATH) return false;
    calls.push(message.member);
    switch (message.member) {
      case "GetCapabilities":
        bus.send(dbus.Message.newMethodReturn(message, "as", [capabilities]));
        return true;
      case "GetServerInformation":
        bus.send(dbus.Message.newMethodReturn(message, "ssss", [options.serverName ?? "stand-in", "agy-bridge tests", "1.0", "1.2"]));
        return true;
      case "Notify": {
        const [appName, replacesId, icon, summary, body, actions, hints, expireTimeout] = message.body as [
          string,
          number,
          string,
          string,
          string,
          string[],
          Record<string, { value: unknown }>,
          number,
        ];
        const id = replacesId !== 0 ? replacesId : nextId++;
        notified.push({
          id,
          appName,
          replacesId,
          icon,
          summary,
          body,
          actions,
          hints: Object.fromEntries(Object.entries(hints).map(([k, v]) => [k, v.value])),
          expireTimeout,
        });
        bus.send(dbus.Message.newMethodReturn(message, "u", [id]));
        if (options.pressOnNotify !== undefined) signal("ActionInvoked", "us", [id, options.pressOnNotify]);
        return true;
      }
      case "CloseNotification": {
        const id = Number(message.body[0]);
        closed.push(id);
        bus.send(dbus.Message.newMethodReturn(message));
        // reason 3: closed by a call to CloseNotification.
        signal("NotificationClosed", "uu", [id, 3]);
        return true;
      }
      default:
        return false;
    }
  });
  return {
    name: (bus as unknown as { name: string }).name,
    calls,
    notified,
    closed,
    invoke: (id, key) => signal("ActionInvoked", "us", [id, key]),
    dismiss: (id, reason = 2) => signal("NotificationClosed", "uu", [id, reason]),
    untilNotified: (predicate, what, ms = 30_000) =>
      until(() => notified.find(predicate), what, {
        ms,
        everyMs: 20,
        seen: () => `Notify calls: ${JSON.stringify(notified.map((n) => ({ id: n.id, summary: n.summary, body: n.body, actions: n.actions })))}`,
      }),
    async close() {
      bus.disconnect();
    },
  };
}
