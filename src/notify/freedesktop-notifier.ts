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
 * The session bus as the alerts use it: connected on first use (the D-Bus
 * library loaded then), again after a lost connection; every call with its
 * own deadline.
 */
interface DesktopBus {
  /** The D-Bus library, once loaded. */
  readonly dbus: DBusModule | undefined;
  /** The connection, opened if need be. */
  ensure(): Promise<MessageBus>;
  call(on: MessageBus, member: string, signature?: string, body?: unknown[], destination?: string, path?: string, iface?: string): Promise<Message>;
  /** `promise`, or a timeout error naming `what` after the call deadline. */
  deadline<T>(promise: Promise<T>, what: string): Promise<T>;
  /** What the notification server's `GetCapabilities` lists. */
  capabilities(on: MessageBus): Promise<string[]>;
  /** Disconnects the open connection, if any. */
  disconnect(): void;
}

/** The alerts' state, shared by the steps below. */
interface AlertState {
  readonly options: FreedesktopNotifierOptions;
  readonly bus: DesktopBus;
  readonly byInteraction: Map<string, Entry>;
  readonly byId: Map<number, Shown>;
  /**
   * Signals for an id whose Notify reply is still on its way to us: the library emits a signal
   * that arrived in the same read as the reply before the reply's awaiter runs. Kept briefly
   * (bounded) and replayed once the id is ours; ids never ours are dropped with the oldest.
   */
  readonly early: Message[];
  /** Alerts being shown or withdrawn and answers being delivered: `close` waits for them. */
  readonly inFlight: Set<Promise<unknown>>;
  readonly problem: (message: string) => void;
  closed: boolean;
}

const EARLY_MAX = 64;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The alerts; the bus is connected (and the D-Bus library loaded) with the
 * first alert, or by {@link FreedesktopNotifier.server}.
 */
export function createFreedesktopNotifier(options: FreedesktopNotifierOptions): FreedesktopNotifier {
  const bus = createDesktopBus(options, {
    closed: () => state.closed,
    onMessage: (message) => onMessage(state, message),
  });
  const state: AlertState = {
    options,
    bus,
    byInteraction: new Map(),
    byId: new Map(),
    early: [],
    inFlight: new Set(),
    problem: (message) => options.onProblem?.(`desktop: ${message}`),
    closed: false,
  };
  const { byInteraction, byId, problem } = state;
  return {
    name: "desktop",
    server: () => serverOf(bus),
    pending(notice) {
      if (state.closed) return;
      const known = byInteraction.get(notice.interactionId);
      if (known?.done === true) return;
      const entry: Entry = known ?? { notice, shown: Promise.resolve(undefined), done: false, acting: false };
      entry.notice = notice;
      byInteraction.set(notice.interactionId, entry);
      const before = entry.shown;
      entry.shown = before
        .then((previous) => show(state, entry, previous !== undefined && byId.get(previous.id) === previous ? previous.id : 0))
        .catch((error: unknown) => {
          problem(`the alert for interaction ${notice.interactionId} could not be shown: ${describe(error)}`);
          return undefined;
        });
      track(state, entry.shown);
    },
    resolved(notice: ResolvedNotice) {
      const entry = byInteraction.get(notice.interactionId);
      if (entry === undefined) return;
      entry.done = true;
      byInteraction.delete(notice.interactionId);
      track(
        state,
        entry.shown
          .then((shown) => (shown === undefined ? undefined : withdraw(state, shown)))
          .catch((error: unknown) => problem(`the alert for interaction ${notice.interactionId} could not be withdrawn: ${describe(error)}`)),
      );
    },
    async close() {
      state.closed = true;
      await Promise.allSettled([...state.inFlight]);
      // Their buttons would answer nothing once this process is gone.
      await Promise.allSettled([...byId.values()].map((shown) => withdraw(state, shown)));
      bus.disconnect();
    },
  };
}

function createDesktopBus(options: FreedesktopNotifierOptions, hooks: { closed: () => boolean; onMessage: (message: Message) => void }): DesktopBus {
  let dbus: DBusModule | undefined;
  const timeoutMs = options.callTimeoutMs ?? 5000;
  let bus: MessageBus | undefined;
  let connecting: Promise<MessageBus> | undefined;

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
      next.on("message", hooks.onMessage);
      await call(next, "AddMatch", "s", [SIGNALS], "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus");
    } catch (error) {
      next.disconnect();
      throw error;
    }
    return next;
  }

  return {
    get dbus() {
      return dbus;
    },
    ensure() {
      if (bus !== undefined) return Promise.resolve(bus);
      connecting ??= connect().then(
        (next) => {
          connecting = undefined;
          if (hooks.closed()) {
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
    },
    call,
    deadline,
    async capabilities(on) {
      const reply = await call(on, "GetCapabilities");
      return Array.isArray(reply.body[0]) ? (reply.body[0] as unknown[]).map(String) : [];
    },
    disconnect() {
      bus?.disconnect();
      bus = undefined;
    },
  };
}

/** Who the notification server is; an `AgyBridgeError` with a sentence when there is none or the bus cannot be used. */
async function serverOf(bus: DesktopBus): Promise<DesktopServer> {
  try {
    const on = await bus.ensure();
    const caps = await bus.capabilities(on);
    const info = await bus.call(on, "GetServerInformation").catch(() => undefined);
    return {
      name: typeof info?.body[0] === "string" && info.body[0] !== "" ? desktopSafe(info.body[0]).slice(0, 80) : NAME,
      actions: caps.includes("actions"),
    };
  } catch (error) {
    const dbus = bus.dbus;
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
}

function onMessage(state: AlertState, message: Message): void {
  if (message.type !== state.bus.dbus!.MessageType.SIGNAL || message.interface !== NAME || message.path !== PATH) return;
  const shown = state.byId.get(Number(message.body[0]));
  if (shown === undefined) {
    if (message.member === "ActionInvoked" || message.member === "NotificationClosed") {
      state.early.push(message);
      if (state.early.length > EARLY_MAX) state.early.shift();
    }
    return;
  }
  signalFor(state, shown, message);
}

function signalFor(state: AlertState, shown: Shown, message: Message): void {
  if (message.sender !== shown.sender) return;
  if (message.member === "NotificationClosed") state.byId.delete(shown.id);
  else if (message.member === "ActionInvoked") act(state, shown, String(message.body[1]));
}

function replayEarly(state: AlertState, shown: Shown): void {
  const { early } = state;
  for (let i = 0; i < early.length; ) {
    const message = early[i]!;
    if (Number(message.body[0]) !== shown.id) {
      i += 1;
      continue;
    }
    early.splice(i, 1);
    if (state.byId.get(shown.id) === shown) signalFor(state, shown, message);
  }
}

/** A pressed Approve or Deny: answered once, through the dispatcher's callback. */
function act(state: AlertState, shown: Shown, key: string): void {
  const entry = shown.entry;
  if (entry.done || entry.acting || entry.notice.request.kind !== "permission") return;
  if (key !== "approve" && key !== "deny") return;
  const action: InteractionAction = { action: key };
  const { conversationId, interactionId } = entry.notice;
  entry.acting = true;
  track(
    state,
    state.options.answer(conversationId, interactionId, action, DESKTOP_DECIDED_BY).then(
      (outcome) => {
        if (outcome.result === "delivered" || outcome.result === "already_resolved") return;
        entry.acting = false;
        state.problem(
          `the ${key} pressed on the desktop for interaction ${interactionId} was not delivered (${outcome.result}${outcome.reason === undefined ? "" : `: ${outcome.reason}`})`,
        );
      },
      (error: unknown) => {
        entry.acting = false;
        state.problem(`the ${key} pressed on the desktop for interaction ${interactionId} could not be delivered: ${describe(error)}`);
      },
    ),
  );
}

async function workspaceOf(state: AlertState, conversationId: string): Promise<string | undefined> {
  const read = state.options.workspaceOf;
  if (read === undefined) return undefined;
  try {
    return await state.bus.deadline(Promise.resolve(read(conversationId)), "reading the conversation's workspace");
  } catch {
    return undefined;
  }
}

/** Shows (or, with `replaces`, updates) the alert for a request. */
async function show(state: AlertState, entry: Entry, replaces: number): Promise<Shown | undefined> {
  const { bus } = state;
  const on = await bus.ensure();
  const notice = entry.notice;
  const caps = await bus.capabilities(on);
  const actions = caps.includes("actions") && notice.request.kind === "permission";
  const workspace = await workspaceOf(state, notice.conversationId);
  const summary = desktopTitle(notice, workspace);
  const body = desktopBody(notice, { actions, markup: caps.includes("body-markup"), answerOn: state.options.answerOn, workspace });
  const hints = { urgency: new bus.dbus!.Variant("y", 1) };
  // expire_timeout 0: the alert stays until it is answered, withdrawn or dismissed.
  const reply = await bus.call(on, "Notify", "susssasa{sv}i", [
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
  state.byId.set(shown.id, shown);
  replayEarly(state, shown);
  // Answered while it was being shown: withdraw it at once.
  if (entry.done || state.closed) await withdraw(state, shown);
  return shown;
}

async function withdraw(state: AlertState, shown: Shown): Promise<void> {
  // Closed by the server already (dismissed, or after an action): nothing to withdraw.
  if (state.byId.get(shown.id) !== shown) return;
  state.byId.delete(shown.id);
  const on = await state.bus.ensure();
  // The spec answers an error for an alert that is gone already: that is not a problem.
  await state.bus.call(on, "CloseNotification", "u", [shown.id]).catch(() => undefined);
}

function track(state: AlertState, promise: Promise<unknown>): void {
  state.inFlight.add(promise);
  void promise.finally(() => state.inFlight.delete(promise));
}
