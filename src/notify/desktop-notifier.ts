/**
 * Desktop alerts (`serve --notify-desktop`, `watch --notify-desktop`): where
 * the person sits, the moment a request waits. Which way depends on the
 * machine, decided before anything is attached so a person who asked for
 * alerts hears at once when there can be none:
 *
 * - Linux and the BSDs: the freedesktop notification server on the session
 *   bus named by `DBUS_SESSION_BUS_ADDRESS`, with Approve / Deny where it
 *   offers actions (freedesktop-notifier.ts);
 * - macOS: the system's own notifier through `osascript` — the text goes in
 *   as arguments of the script's run handler, never into the script, and no
 *   shell runs. It has no buttons and cannot withdraw an alert;
 * - anything else: a sentence saying it is not supported.
 */
import { spawn } from "node:child_process";
import type { AnswerInteraction, Notifier, PendingNotice } from "./notice.js";
import { desktopBody, desktopTitle, type AnswerPlace } from "./desktop-text.js";
import { checkFreedesktopServer, createFreedesktopNotifier, type DesktopServer } from "./freedesktop-notifier.js";

export type DesktopSupport = { kind: "freedesktop"; busAddress: string } | { kind: "macos" } | { kind: "unsupported"; reason: string };

const FREEDESKTOP_PLATFORMS = new Set(["linux", "freebsd", "openbsd", "netbsd"]);

/** One `unix:` address of a D-Bus address list, in the form our D-Bus library reads (no escapes, no commas). */
function unixAddress(list: string): string | undefined {
  for (const address of list.split(";")) {
    const colon = address.indexOf(":");
    if (colon < 0 || address.slice(0, colon) !== "unix") continue;
    const params = new Map<string, string>();
    for (const pair of address.slice(colon + 1).split(",")) {
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      let value: string;
      try {
        value = decodeURIComponent(pair.slice(eq + 1));
      } catch {
        continue;
      }
      params.set(pair.slice(0, eq), value);
    }
    for (const key of ["path", "abstract"] as const) {
      const value = params.get(key);
      if (value !== undefined && value !== "" && !/[,;=]/.test(value)) return `unix:${key}=${value}`;
    }
  }
  return undefined;
}

/**
 * How this machine shows desktop alerts, or why it cannot: `platform` is
 * `process.platform`, `env` the command's environment.
 */
export function desktopSupport(platform: string, env: Readonly<Record<string, string | undefined>>): DesktopSupport {
  if (platform === "darwin") return { kind: "macos" };
  if (!FREEDESKTOP_PLATFORMS.has(platform)) {
    return {
      kind: "unsupported",
      reason: `--notify-desktop works on Linux (and other freedesktop desktops) and macOS, not on ${platform}; use serve's page, ntfy or Telegram for alerts instead`,
    };
  }
  const list = env["DBUS_SESSION_BUS_ADDRESS"];
  if (list === undefined || list.trim() === "") {
    return {
      kind: "unsupported",
      reason:
        "--notify-desktop needs your desktop session's bus, and DBUS_SESSION_BUS_ADDRESS is not set: run it from a terminal of your desktop session, or set it (usually unix:path=/run/user/$(id -u)/bus)",
    };
  }
  const busAddress = unixAddress(list.trim());
  if (busAddress === undefined) {
    const transports = [...new Set(list.split(";").map((a) => a.split(":")[0] ?? ""))].join(", ");
    return {
      kind: "unsupported",
      reason: `--notify-desktop reaches the session bus over a unix socket only (unix:path=… or unix:abstract=…), and DBUS_SESSION_BUS_ADDRESS names ${transports}`,
    };
  }
  return { kind: "freedesktop", busAddress };
}

export interface MacNotifierOptions {
  answerOn: AnswerPlace;
  workspaceOf?: (conversationId: string) => Promise<string | undefined> | string | undefined;
  onProblem?: (message: string) => void;
  /** The notifier program (default `osascript`, found on PATH). */
  command?: string;
}

// The title and body arrive as argv of the run handler: nothing a request says is ever AppleScript source.
const SCRIPT = ["-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run"];

/** macOS: one `display notification` per request that waits; no actions, and nothing to withdraw. */
export function createMacNotifier(options: MacNotifierOptions): Notifier {
  const command = options.command ?? "osascript";
  const running = new Set<Promise<void>>();
  const problem = (message: string) => options.onProblem?.(`desktop: ${message}`);

  function run(args: string[]): Promise<void> {
    return new Promise((resolve) => {
      const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-500)));
      child.once("error", (error) => {
        problem(`${command} could not be run (${error.message}); macOS alerts need /usr/bin/osascript`);
        resolve();
      });
      child.once("close", (code) => {
        if (code !== 0 && code !== null) problem(`${command} exited with ${code}${stderr.trim() === "" ? "" : `: ${stderr.trim()}`}`);
        resolve();
      });
    });
  }

  async function show(notice: PendingNotice): Promise<void> {
    let workspace: string | undefined;
    try {
      workspace = await options.workspaceOf?.(notice.conversationId);
    } catch {
      workspace = undefined;
    }
    const title = desktopTitle(notice, workspace);
    const body = desktopBody(notice, { actions: false, markup: false, answerOn: options.answerOn, workspace });
    await run([...SCRIPT, title, body]);
  }

  return {
    name: "desktop",
    pending(notice) {
      const shown = show(notice);
      running.add(shown);
      void shown.finally(() => running.delete(shown));
    },
    resolved() {
      // `display notification` gives no handle: the alert stays in Notification Centre.
    },
    async close() {
      await Promise.allSettled([...running]);
    },
  };
}

export interface DesktopNotifierOptions {
  support: Exclude<DesktopSupport, { kind: "unsupported" }>;
  answer: AnswerInteraction;
  answerOn: AnswerPlace;
  workspaceOf?: (conversationId: string) => Promise<string | undefined> | string | undefined;
  onProblem?: (message: string) => void;
}

/**
 * Checks at startup that alerts can be shown here: on Linux the session bus
 * answers and a notification server is on it (an `AgyBridgeError` with the
 * sentence otherwise). Leaves nothing open.
 */
export async function checkDesktop(support: Exclude<DesktopSupport, { kind: "unsupported" }>): Promise<DesktopServer> {
  if (support.kind === "macos") return { name: "macOS Notification Centre", actions: false };
  return checkFreedesktopServer({ busAddress: support.busAddress });
}

/** The desktop channel of this machine (connected with its first alert). */
export function createDesktopNotifier(options: DesktopNotifierOptions): Notifier {
  const shared = {
    answerOn: options.answerOn,
    ...(options.workspaceOf === undefined ? {} : { workspaceOf: options.workspaceOf }),
    ...(options.onProblem === undefined ? {} : { onProblem: options.onProblem }),
  };
  if (options.support.kind === "macos") return createMacNotifier(shared);
  return createFreedesktopNotifier({ ...shared, busAddress: options.support.busAddress, answer: options.answer });
}
