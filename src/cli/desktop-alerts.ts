/**
 * `--notify-desktop` for `serve` and `watch` (docs/notifications.md#desktop):
 * checked before anything is attached — a machine with no way to show
 * alerts is a usage error (exit 2) with the sentence saying what to set, a
 * session bus with no notification server on it fails the start (exit 1) —
 * so a person who asked for alerts never waits for ones that cannot come.
 * The notify layer (and the D-Bus library) is loaded only with the flag.
 */
import { hostname } from "node:os";
import type { AnswerInteraction, DesktopServer, DesktopSupport } from "../notify/index.js";
import type { AgySessionApi } from "../session/index.js";
import type { CliIo } from "./command.js";
import { terminalText } from "./terminal-text.js";

export const DESKTOP_OPTIONS = {
  "notify-desktop": { type: "boolean" },
} as const;

export const DESKTOP_HELP = `  --notify-desktop    a desktop alert for each request that waits for you (Linux: the
                      desktop's notification server over D-Bus, with Approve / Deny
                      where it offers buttons; macOS: Notification Centre, no buttons)`;

export interface DesktopPlan {
  support: Exclude<DesktopSupport, { kind: "unsupported" }>;
  server: DesktopServer;
}

/** A string: the usage sentence (exit 2). Throws with a sentence when the bus or its notification server fails (exit 1). */
export async function prepareDesktop(io: CliIo, command: "serve" | "watch"): Promise<DesktopPlan | string> {
  const notify = await import("../notify/index.js");
  const support = notify.desktopSupport(process.platform, io.env);
  if (support.kind === "unsupported") return support.reason;
  const server = await notify.checkDesktop(support);
  const buttons = server.actions
    ? "with Approve / Deny"
    : command === "serve"
      ? "without buttons: answer on the page"
      : "without buttons: answer in agy's TUI or with approve / deny";
  io.stderr.write(`${terminalText(`agy-bridge ${command}: desktop alerts go to ${server.name} (${buttons})`)}\n`);
  return { support, server };
}

export interface WatchDesktop {
  /** Follows the attached session in the background: its requests that wait for a person become alerts. */
  follow(session: AgySessionApi): void;
  close(): Promise<void>;
}

/** watch's alerts: the same dispatcher and adapter as serve's, answering through watch's own session as `desktop`. */
export async function startWatchDesktop(io: CliIo, plan: DesktopPlan): Promise<WatchDesktop> {
  const notify = await import("../notify/index.js");
  const say = (message: string) => io.stderr.write(`${terminalText(`agy-bridge watch: ${message}`)}\n`);
  let session: AgySessionApi | undefined;
  const answer: AnswerInteraction = async (_conversationId, interactionId, action, decidedBy) => {
    if (session === undefined) return { result: "not_found", reason: "watch is not attached yet" };
    const result =
      action.action === "approve"
        ? await session.approve(interactionId, { decidedBy })
        : action.action === "deny"
          ? await session.deny(interactionId, { decidedBy, ...(action.instruction === undefined ? {} : { instruction: action.instruction }) })
          : await session.answer(interactionId, {
              decidedBy,
              optionIds: action.optionIds,
              ...(action.writeIn === undefined ? {} : { writeIn: action.writeIn }),
            });
    return result.result === "decided_by_policy" ? { result: result.result, reason: result.reason } : { result: result.result };
  };
  const workspaces = new Map<string, Promise<string | undefined>>();
  const workspaceOf = (conversationId: string) => {
    if (session === undefined) return undefined;
    let known = workspaces.get(conversationId);
    if (known === undefined) {
      known = session.workspace().catch(() => undefined);
      workspaces.set(conversationId, known);
    }
    return known;
  };
  const notifier = notify.createDesktopNotifier({ support: plan.support, answer, answerOn: "cli", workspaceOf, onProblem: say });
  // No policy flag here: a session given --policy marks each request with its verdict, and the dispatcher alerts only the ones left to a person.
  const dispatcher = notify.createNotifyDispatcher({ notifiers: [notifier], pageUrl: "", host: hostname(), policy: false, onProblem: say });
  const stop = new AbortController();
  let loop: Promise<void> | undefined;
  return {
    follow(attached) {
      session = attached;
      const observer = dispatcher.session(attached.conversationId);
      const signal = AbortSignal.any([io.signal, stop.signal]);
      loop = (async () => {
        // A background reader: the requests open now, then live ones; watch's own output keeps the history.
        for await (const event of attached.events({ background: true, signal })) observer.observe(event);
      })().catch((error: unknown) => {
        if (!signal.aborted) say(`desktop alerts stopped: ${error instanceof Error ? error.message : String(error)}`);
      });
    },
    async close() {
      stop.abort();
      await loop;
      await dispatcher.close();
    },
  };
}
