/**
 * `agy-bridge sessions`: every agy language server on this machine and the
 * conversations it hosts, as one JSON array or an aligned table. The CSRF
 * token is reported as present or not, never printed: entries are built
 * field by field, never by spreading what discovery found.
 */
import type { DiscoveredServer, DiscoveryResult, TmuxServerRef } from "../discovery/index.js";
import type { WaitingFor } from "../mapper/index.js";
import { defineCommand, type Command } from "./command.js";
import { terminalText } from "./terminal-text.js";
import { TMUX_SERVER_OPTIONS, tmuxServerOf } from "./tmux-server-option.js";

const HELP = `Usage: agy-bridge sessions [--json] [-L NAME | -S PATH]

Lists every agy language server this machine runs (found through its
processes, listeners and credentials; no URL needed) and the conversations
each hosts.

Options:
  --json      print one JSON array, one entry per server (\`[]\` when none runs):
              pid, executable, version, agyVersion (agy's version, null when
              unknown; agy is never started to learn it), agyVersionSource
              (process, screen or server; null), simulator (true for
              agy-bridge's own simulator), url, listeners (port, transport,
              heartbeatOk), csrfTokenPresent, conversations (conversationId,
              status, stepCount, lastUserInputTime, waitingSteps, waitingFor),
              tmuxPane (status is agy's run status as sent, e.g.
              CASCADE_RUN_STATUS_IDLE; waitingFor, present while a step waits,
              is permission, file, question or tui_prompt)
  -L NAME     match agy's tmux panes on this tmux server (tmux -L), not the default
  -S PATH     the same, by the server's socket path (tmux -S)
  -h, --help  show this help

Without --json, prints an aligned table with one row per conversation (the
last input as UTC to the second and how long ago).
The CSRF token is never printed. Run \`agy-bridge doctor\` when a server you
expect is missing.

Exit status: 0 (also when nothing runs); 2 on a usage error.
`;

/** One server as `sessions --json` prints it. */
export interface SessionEntry {
  pid: number;
  executable: string;
  version?: string;
  /** agy's version (`1.2.10`), null when unknown. */
  agyVersion: string | null;
  agyVersionSource: "process" | "server" | "screen" | null;
  /** agy-bridge's simulator (`sim --as-agy`), not a real agy. */
  simulator: boolean;
  url?: string;
  listeners: Array<{ port: number; transport: string; heartbeatOk: boolean }>;
  csrfTokenPresent: boolean;
  conversations: Array<{
    conversationId: string;
    status?: string;
    stepCount?: number;
    lastUserInputTime?: string;
    waitingSteps: number[];
    /** What the earliest waiting step asks for (docs/events.md, `status`); absent when none waits or agy did not say. */
    waitingFor?: WaitingFor;
  }>;
  tmuxPane?: string;
}

/** The printable entry of a server: chosen fields only, so the token cannot slip in. */
export function toSessionEntry(server: DiscoveredServer): SessionEntry {
  return sessionEntryOf(server, new Map());
}

/** {@link toSessionEntry}, with what each waiting conversation waits for. */
export function sessionEntryOf(server: DiscoveredServer, waitingFor: ReadonlyMap<string, WaitingFor>): SessionEntry {
  const entry: SessionEntry = {
    pid: server.pid,
    executable: server.executable,
    agyVersion: server.agyVersion ?? null,
    agyVersionSource: server.agyVersionSource ?? null,
    simulator: server.simulator === true,
    listeners: server.listeners.map((l) => ({ port: l.port, transport: l.transport, heartbeatOk: l.heartbeatOk })),
    csrfTokenPresent: server.csrfTokenPresent,
    conversations: server.conversations.map((c) => {
      const out: SessionEntry["conversations"][number] = { conversationId: c.conversationId, waitingSteps: [...c.waitingSteps] };
      if (c.status !== undefined) out.status = c.status;
      if (c.stepCount !== undefined) out.stepCount = c.stepCount;
      if (c.lastUserInputTime !== undefined) out.lastUserInputTime = c.lastUserInputTime;
      const waiting = c.waitingSteps.length === 0 ? undefined : waitingFor.get(c.conversationId);
      if (waiting !== undefined) out.waitingFor = waiting;
      return out;
    }),
  };
  if (server.version !== undefined) entry.version = server.version;
  if (server.url !== undefined) entry.url = server.url;
  if (server.tmuxPane !== undefined) entry.tmuxPane = server.tmuxPane;
  return entry;
}

/** Rows of cells, padded so every column lines up; each cell made safe first, so widths count what is shown. */
export function alignedTable(rows: readonly string[][]): string {
  const safe = rows.map((row) => row.map((cell) => terminalText(cell)));
  const widths: number[] = [];
  for (const row of safe) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return (
    safe
      .map((row) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

/**
 * agy's timestamp (RFC 3339 with nanoseconds) as people read it: UTC to the
 * second and how long ago, e.g. `2026-01-07 10:11:12Z (5 min ago)`. Text that
 * is not a time is shown as sent.
 */
export function readableTime(text: string, now: number): string {
  const at = Date.parse(text);
  if (Number.isNaN(at)) return text;
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z (${ago(now - at)})`;
}

function ago(ms: number): string {
  if (ms < 0) return "in the future";
  const s = Math.floor(ms / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  const days = Math.floor(s / 86_400);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

/**
 * `%3`, or `%3 -L work` when the panes are another tmux server's: what a
 * person passes to `--pane` (a pane id means something only on its server).
 */
export function paneText(pane: string, server: TmuxServerRef | undefined): string {
  if (server?.socketPath !== undefined) return `${pane} -S ${server.socketPath}`;
  if (server?.socketName !== undefined) return `${pane} -L ${server.socketName}`;
  return pane;
}

function sessionsTable(entries: readonly SessionEntry[], now: number, tmux: TmuxServerRef | undefined): string {
  const rows = [["PID", "VERSION", "URL", "TOKEN", "PANE", "CONVERSATION", "STATUS", "STEPS", "WAITING", "LAST INPUT"]];
  for (const e of entries) {
    const version = `${e.agyVersion ?? e.version ?? "-"}${e.simulator ? " (simulator)" : ""}`;
    const server = [
      String(e.pid),
      version,
      e.url ?? "(no answering listener)",
      e.csrfTokenPresent ? "yes" : "no",
      e.tmuxPane === undefined ? "-" : paneText(e.tmuxPane, tmux),
    ];
    if (e.conversations.length === 0) rows.push([...server, "-", "-", "-", "-", "-"]);
    for (const c of e.conversations) {
      rows.push([
        ...server,
        c.conversationId,
        (c.status ?? "-").replace(/^CASCADE_RUN_STATUS_/, ""),
        String(c.stepCount ?? 0),
        c.waitingSteps.length === 0 ? "-" : `${c.waitingSteps.join(",")}${c.waitingFor === undefined ? "" : ` (${c.waitingFor})`}`,
        c.lastUserInputTime === undefined ? "-" : readableTime(c.lastUserInputTime, now),
      ]);
    }
  }
  return alignedTable(rows);
}

/** What the command passes to discovery: the tmux servers whose panes are matched (absent: the default one). */
export interface DiscoveryScope {
  tmuxServers?: readonly TmuxServerRef[];
}

/** The tmux servers `-L` / `-S` chose, as discovery takes them. */
export function discoveryScope(server: TmuxServerRef | undefined): DiscoveryScope {
  return server === undefined ? {} : { tmuxServers: [server] };
}

export interface SessionsCommandOptions {
  /** Runs discovery; tests scope it to their own processes. */
  discover?: (scope: DiscoveryScope) => Promise<DiscoveryResult>;
  /** The clock for "how long ago" (default `Date.now`). */
  now?: () => number;
  /** What each waiting conversation of a server waits for (default: ask the server, `lookUpWaitingFor`). */
  waitingFor?: (server: DiscoveredServer, signal: AbortSignal) => Promise<ReadonlyMap<string, WaitingFor>>;
}

export function createSessionsCommand(options: SessionsCommandOptions = {}): Command {
  // Loaded to run, not for --help; with the discovery cache (docs/discovery.md) when there is a place for it.
  const cachedDiscover = (env: Readonly<Record<string, string | undefined>>) => async (scope: DiscoveryScope) => {
    const { createDiscoveryCache, discoverServers, discoveryCacheDir } = await import("../discovery/index.js");
    const dir = discoveryCacheDir(env);
    return discoverServers({ ...scope, ...(dir === undefined ? {} : { cache: createDiscoveryCache({ dir }) }) });
  };
  return defineCommand({
    name: "sessions",
    summary: "list the agy language servers on this machine and their conversations",
    help: HELP,
    options: { json: { type: "boolean" }, ...TMUX_SERVER_OPTIONS },
    async run(io, args) {
      const tmux = tmuxServerOf("sessions", args.values);
      const discover = options.discover ?? cachedDiscover(io.env);
      const { servers } = await discover(discoveryScope(tmux));
      const lookUp = options.waitingFor ?? askWaitingFor;
      const waiting = await Promise.all(servers.map((server) => lookUp(server, io.signal)));
      const entries = servers.map((server, i) => sessionEntryOf(server, waiting[i] ?? new Map()));
      if (args.values.json === true) {
        io.stdout.write(`${JSON.stringify(entries)}\n`);
        return 0;
      }
      if (entries.length === 0) {
        io.stderr.write("no agy language server is running; run `agy-bridge doctor` to see what discovery looked at\n");
        return 0;
      }
      io.stdout.write(sessionsTable(entries, (options.now ?? Date.now)(), tmux));
      return 0;
    },
  });
}

/**
 * `lookUpWaitingFor`, loaded only for a server with a waiting conversation:
 * it asks nothing otherwise, and loading it (the mapper, and its event
 * schemas' zod) would cost a listing of idle sessions more than discovery.
 */
async function askWaitingFor(server: DiscoveredServer, signal: AbortSignal): Promise<ReadonlyMap<string, WaitingFor>> {
  if (server.url === undefined || !server.conversations.some((c) => c.waitingSteps.length > 0)) return new Map();
  return (await import("../session/waiting-lookup.js")).lookUpWaitingFor(server, { signal });
}

export const sessionsCommand = createSessionsCommand();
