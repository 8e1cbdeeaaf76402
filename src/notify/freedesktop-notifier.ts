/**
 * Desktop alerts on Linux: the freedesktop Desktop Notifications interface
 * (`org.freedesktop.Notifications` at `/org/freedesktop/Notifications`) on
 * the session bus, spoken with `@particle/dbus-next` (docs/notifications.md
 * says why that library), which is loaded only when this is opened.
 *
 * - `Notify` when a request waits, with the actions `approve` / `deny` for a
 *   permission when the server's `GetCapabilities` lists `actions`; an
 *   escalation's reminder replaces the alert (`replaces_id`).
 * - `ActionInvoked` answers through the dispatcher's callback (serve's hub,
 *   or watch's session) as `desktop`, once per alert. Signals count only
 *   from the bus name that showed our alert and for ids we were given:
 *   servers broadcast them, and other applications' alerts share the ids.
 * - `CloseNotification` when the request is answered anywhere else, unless
 *   the server already said the alert was closed (`NotificationClosed`);
 *   alerts still open when the process stops are withdrawn too, since their
 *   buttons would answer nothing.
 *
 * Every bus call has its own deadline: a server that never replies holds
 * up nothing. A lost bus connection is opened again for the next alert.
 */
import type { Message, MessageBus } from "@particle/dbus-next";
import { AgyBridgeError } from "../errors.js";
import type { AnswerInteraction, InteractionAction, Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { desktopBody, desktopSafe, desktopTitle, type AnswerPlace } from "./desktop-text.js";

const NAME = "org.freedesktop.Notifications";
const PATH = "/org/freedesktop/Notifications";
const SIGNALS = `type='signal',interface='${NAME}',path='${PATH}'`;

/** Who an answer given on the desktop is recorded as. */
export const DESKTOP_DECIDED_BY = "desktop";

export interface FreedesktopNotifierOptions {
  /** One `unix:path=…` or `unix:abstract=…` address (from `DBUS_SESSION_BUS_ADDRESS`, see `desktopSupport`). */
  busAddress: string;
  /** How a pressed action answers (through serve's hub or watch's session). */
  answer: AnswerInteraction;
  answerOn: AnswerPlace;
  /** The conversation's workspace, for the title and relative file paths. */
  workspaceOf?: (conversationId: string) => Promise<string | undefined> | string | undefined;
  /** One sentence about a failed alert or answer. */
  onProblem?: (message: string) => void;
  /** Each bus call's deadline (default 5 s). */
  callTimeoutMs?: number;
}

export interface FreedesktopNotifier extends Notifier {
  /** Connects if need be and asks the notification server who it is; rejects with a sentence when there is none. */
  server(): Promise<DesktopServer>;
}

interface Shown {
  id: number;
  /** The unique bus name that showed it: only its signals are believed. */
  sender: string;
  entry: Entry;
}

interface Entry {
  notice: PendingNotice;
  /** The current alert (the reminder's replaces the first). */
  shown: Promise<Shown | undefined>;
  done: boolean;
  /** An action is being answered or was delivered: a second press does nothing. */
  acting: boolean;
}

type DBusModule = typeof import("@particle/dbus-next");

let loaded: Promise<DBusModule> | undefined;
/** The D-Bus library, loaded the first time desktop alerts are used (other commands never pay for it). */
function loadDBus(): Promise<DBusModule> {
  loaded ??= import("@particle/dbus-next");
  return loaded;
}

export interface DesktopServer {
  /** What `GetServerInformation` calls itself (`gnome-shell`, `dunst`), else the interface's name. */
  name: string;
  /** It lists the `actions` capability: alerts for permissions carry Approve / Deny. */
  actions: boolean;
}

/**
 * Checks at startup that the session bus answers and a notification server
 * is on it, so a person who asked for alerts hears at once when there can be
 * none; throws an `AgyBridgeError` with the sentence. Leaves nothing open.
 */
export async function checkFreedesktopServer(options: { busAddress: string; callTimeoutMs?: number }): Promise<DesktopServer> {
  const notifier = createFreedesktopNotifier({ ...options, answer: async () => ({ result: "not_found" }), answerOn: "cli" });
  try {
    return await notifier.server();
  } finally {
    await notifier.close();
  }
}

/**
 * The alerts; the bus is connected (and the D-Bus library loaded) with the
 * first alert, or by {@link FreedesktopNotifier.server}.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one of the functions over 100 lines that #35 splits; listed so no new one is added
export function createFreedesktopNotifier(options: FreedesktopNotifierOptions): FreedesktopNotifier {
  let dbus: DBusModule | undefined;
  const timeoutMs = options.callTimeoutMs ?? 5000;
  const byInteraction = new Map<string, Entry>();
  const byId = new Map<number, Shown>();
  const inFlight = new Set<Promise<unknown>>();
  let bus: MessageBus | undefined;
  let connecting: Promise<MessageBus> | undefined;
  let closed = false;
  const problem = (message: string) => options.onProblem?.(`desktop: ${message}`);
  const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

  function deadline<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AgyBridgeError("timeout", `${what} got no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  function call(on: MessageBus, member: string, signature = "", body: unknown[] = [], destination = NAME, path = PATH, iface = NAME): Promise<Message> {
    const message = new dbus!.Message({ destination, path, interface: iface, member, ...(signature === "" ? {} : { signature, body }) });
    return deadline(on.call(message) as Promise<Message>, `${iface}.${member} on the session bus`);
  }

  // Signals for an id whose Notify reply is still on its way to us: the library emits a signal
  // that arrived in the same read as the reply before the reply's awaiter runs. Kept briefly
  // (bounded) and replayed once the id is ours; ids never ours are dropped with the oldest.
  const early: Message[] = [];
  const EARLY_MAX = 64;

  function onMessage(message: Message): void {
    if (message.type !== dbus!.MessageType.SIGNAL || message.interface !== NAME || message.path !== PATH) return;
    const shown = byId.get(Number(message.body[0]));
    if (shown === undefined) {
      if (message.member === "ActionInvoked" || message.member === "NotificationClosed") {
        early.push(message);
        if (early.length > EARLY_MAX) early.shift();
      }
      return;
    }
    signalFor(shown, message);
  }

  function signalFor(shown: Shown, message: Message): void {
    if (message.sender !== shown.sender) return;
    if (message.member === "NotificationClosed") byId.delete(shown.id);
    else if (message.member === "ActionInvoked") act(shown, String(message.body[1]));
  }

  function replayEarly(shown: Shown): void {
    for (let i = 0; i < early.length; ) {
      const message = early[i]!;
      if (Number(message.body[0]) !== shown.id) {
        i += 1;
        continue;
      }
      early.splice(i, 1);
      if (byId.get(shown.id) === shown) signalFor(shown, message);
    }
  }

  function act(shown: Shown, key: string): void {
    const entry = shown.entry;
    if (entry.done || entry.acting || entry.notice.request.kind !== "permission") return;
    if (key !== "approve" && key !== "deny") return;
    const action: InteractionAction = { action: key };
    const { conversationId, interactionId } = entry.notice;
    entry.acting = true;
    track(
      options.answer(conversationId, interactionId, action, DESKTOP_DECIDED_BY).then(
        (outcome) => {
          if (outcome.result === "delivered" || outcome.result === "already_resolved") return;
          entry.acting = false;
          problem(
            `the ${key} pressed on the desktop for interaction ${interactionId} was not delivered (${outcome.result}${outcome.reason === undefined ? "" : `: ${outcome.reason}`})`,
          );
        },
        (error: unknown) => {
          entry.acting = false;
          problem(`the ${key} pressed on the desktop for interaction ${interactionId} could not be delivered: ${describe(error)}`);
        },
      ),
    );
  }

  async function connect(): Promise<MessageBus> {
    dbus ??= await loadDBus();
    const next = dbus.sessionBus({ busAddress: options.busAddress });
    // Always listened to (an EventEmitter's unheard "error" throws): a socket error or a write to a
    // closed stream ends this connection, and the next alert connects again.
    next.on("error", () => {
      if (bus === next) bus = undefined;
      next.disconnect();
    });
    try {
      await deadline(
        new Promise<void>((resolve, reject) => {
          next.once("connect", () => resolve());
          next.once("error", (error: unknown) => reject(error));
        }),
        "connecting to the session bus",
      );
      next.on("message", onMessage);
      await call(next, "AddMatch", "s", [SIGNALS], "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus");
    } catch (error) {
      next.disconnect();
      throw error;
    }
    return next;
  }

  function ensureBus(): Promise<MessageBus> {
    if (bus !== undefined) return Promise.resolve(bus);
    connecting ??= connect().then(
      (next) => {
        connecting = undefined;
        if (closed) {
          next.disconnect();
          throw new AgyBridgeError("aborted", "desktop alerts were stopped");
        }
        bus = next;
        return next;
      },
      (error: unknown) => {
        connecting = undefined;
        throw error;
      },
    );
    return connecting;
  }

  async function capabilities(on: MessageBus): Promise<string[]> {
    const reply = await call(on, "GetCapabilities");
    return Array.isArray(reply.body[0]) ? (reply.body[0] as unknown[]).map(String) : [];
  }

  async function workspaceOf(conversationId: string): Promise<string | undefined> {
    if (options.workspaceOf === undefined) return undefined;
    try {
      return await deadline(Promise.resolve(options.workspaceOf(conversationId)), "reading the conversation's workspace");
    } catch {
      return undefined;
    }
  }

  async function show(entry: Entry, replaces: number): Promise<Shown | undefined> {
    const on = await ensureBus();
    const notice = entry.notice;
    const caps = await capabilities(on);
    const actions = caps.includes("actions") && notice.request.kind === "permission";
    const workspace = await workspaceOf(notice.conversationId);
    const summary = desktopTitle(notice, workspace);
    const body = desktopBody(notice, { actions, markup: caps.includes("body-markup"), answerOn: options.answerOn, workspace });
    const hints = { urgency: new dbus!.Variant("y", 1) };
    // expire_timeout 0: the alert stays until it is answered, withdrawn or dismissed.
    const reply = await call(on, "Notify", "susssasa{sv}i", [
      "agy-bridge",
      replaces,
      "",
      summary,
      body,
      actions ? ["approve", "Approve", "deny", "Deny"] : [],
      hints,
      0,
    ]);
    const shown: Shown = { id: Number(reply.body[0]), sender: reply.sender, entry };
    byId.set(shown.id, shown);
    replayEarly(shown);
    // Answered while it was being shown: withdraw it at once.
    if (entry.done || closed) await withdraw(shown);
    return shown;
  }

  async function withdraw(shown: Shown): Promise<void> {
    // Closed by the server already (dismissed, or after an action): nothing to withdraw.
    if (byId.get(shown.id) !== shown) return;
    byId.delete(shown.id);
    const on = await ensureBus();
    // The spec answers an error for an alert that is gone already: that is not a problem.
    await call(on, "CloseNotification", "u", [shown.id]).catch(() => undefined);
  }

  function track(promise: Promise<unknown>): void {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise));
  }

  return {
    name: "desktop",
    async server() {
      try {
        const on = await ensureBus();
        const caps = await capabilities(on);
        const info = await call(on, "GetServerInformation").catch(() => undefined);
        return {
          name: typeof info?.body[0] === "string" && info.body[0] !== "" ? desktopSafe(info.body[0]).slice(0, 80) : NAME,
          actions: caps.includes("actions"),
        };
      } catch (error) {
        const type = dbus !== undefined && error instanceof dbus.DBusError ? error.type : undefined;
        if (type === "org.freedesktop.DBus.Error.ServiceUnknown" || type === "org.freedesktop.DBus.Error.NameHasNoOwner") {
          throw new AgyBridgeError(
            "transport",
            `no notification server is on the session bus (nothing owns ${NAME}): start your desktop's notification daemon (GNOME and KDE have one; elsewhere e.g. dunst or mako), or leave out --notify-desktop`,
            { cause: error },
          );
        }
        throw new AgyBridgeError(
          "transport",
          `the session bus in DBUS_SESSION_BUS_ADDRESS could not be used for desktop alerts (${describe(error)}): check that the variable names your desktop session's bus`,
          { cause: error },
        );
      }
    },
    pending(notice) {
      if (closed) return;
      const known = byInteraction.get(notice.interactionId);
      if (known?.done === true) return;
      const entry: Entry = known ?? { notice, shown: Promise.resolve(undefined), done: false, acting: false };
      entry.notice = notice;
      byInteraction.set(notice.interactionId, entry);
      const before = entry.shown;
      entry.shown = before
        .then((previous) => show(entry, previous !== undefined && byId.get(previous.id) === previous ? previous.id : 0))
        .catch((error: unknown) => {
          problem(`the alert for interaction ${notice.interactionId} could not be shown: ${describe(error)}`);
          return undefined;
        });
      track(entry.shown);
    },
    resolved(notice: ResolvedNotice) {
      const entry = byInteraction.get(notice.interactionId);
      if (entry === undefined) return;
      entry.done = true;
      byInteraction.delete(notice.interactionId);
      track(
        entry.shown
          .then((shown) => (shown === undefined ? undefined : withdraw(shown)))
          .catch((error: unknown) => problem(`the alert for interaction ${notice.interactionId} could not be withdrawn: ${describe(error)}`)),
      );
    },
    async close() {
      closed = true;
      await Promise.allSettled([...inFlight]);
      // Their buttons would answer nothing once this process is gone.
      await Promise.allSettled([...byId.values()].map((shown) => withdraw(shown)));
      bus?.disconnect();
      bus = undefined;
    },
  };
}
