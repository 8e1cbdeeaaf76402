/**
 * `agy-bridge doctor`: walks every discovery step and says what it found,
 * what failed and why, with one hint per failure; plus the Node and tmux
 * versions. Exit 0 when at least one usable server was found.
 */
import { discoverServers, spawnCommand, type DiscoveredServer, type DiscoveryResult, type DiscoveryStep, type RunCommand } from "../discovery/index.js";
import { defineCommand, type Command } from "./command.js";
import { terminalText } from "./terminal-text.js";
import { discoveryScope, toSessionEntry, type DiscoveryScope, type SessionEntry } from "./sessions-command.js";
import { tmuxServerOf } from "./tmux-server-option.js";
import { CONNECTION_OPTIONS, connectionArgs, UsageError } from "./args.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { runDoctorReport } from "./doctor-report.js";
import { PANE_OPTION } from "./session-connect.js";

const HELP = `Usage: agy-bridge doctor [--json] [-L NAME | -S PATH]
       agy-bridge doctor --report [--json] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--csrf-token T]

Checks how agy-bridge finds agy's language server on this machine, step by
step: processes, which agy each is (its version, read without starting agy,
and whether it is agy-bridge's simulator), listeners, CSRF token, each
listener's transport and Heartbeat, conversations, tmux panes. Every failure
comes with a one-line hint. The CSRF token is never printed.

Options:
  --json      print one JSON object: ok, node, tmux, steps (step, status,
              pid, port, detail, hint) and servers (as \`sessions --json\`)
  -L NAME     match agy's tmux panes on this tmux server (tmux -L), not the default
  -S PATH     the same, by the server's socket path (tmux -S)
  --report    check agy-bridge's recorded facts (docs/spike-notes.md) against
              the agy the session commands would choose, with calls that change
              nothing and no key pressed, and print a compatibility report
              (Markdown; with --json {agyVersion, agyVersionSource,
              newerThanProbed, simulator, generatedAt, facts:[{id, statement,
              status, seen}]});
              takes --conversation, --pane, --url and --csrf-token as they do.
              Exit 0 when a report was produced, 1 when no agy was found
  -h, --help  show this help

Exit status: 0 when at least one usable server was found; 1 otherwise (the
reason on stderr); 2 on a usage error.
`;

export interface DoctorCommandOptions {
  discover?: (scope: DiscoveryScope) => Promise<DiscoveryResult>;
  run?: RunCommand;
  /** The Node version to report; default this process's. */
  nodeVersion?: string;
}

interface DoctorReport {
  ok: boolean;
  node: string;
  tmux: string | null;
  steps: DiscoveryStep[];
  servers: SessionEntry[];
}

/** Pids whose URL is a listener not proven to be theirs (their fds were unreadable): doctor says it guessed. */
function guessedPids(servers: readonly DiscoveredServer[]): Set<number> {
  const out = new Set<number>();
  for (const server of servers) {
    if (server.url === undefined) continue;
    const port = Number(new URL(server.url).port);
    if (server.listeners.some((l) => l.port === port && l.trust !== "own")) out.add(server.pid);
  }
  return out;
}

const MARK: Record<DiscoveryStep["status"], string> = { ok: "ok  ", warn: "warn", fail: "FAIL", info: "info" };

async function tmuxVersion(run: RunCommand): Promise<string | null> {
  const result = await run("tmux", ["-V"], { timeoutMs: 5_000 });
  return result.code === 0 ? result.stdout.trim() : null;
}

function human(report: DoctorReport, guessed: ReadonlySet<number>): string {
  const lines = [`node ${report.node}`, report.tmux ?? "tmux: not found (panes cannot be resolved; install tmux)"];
  for (const step of report.steps) {
    lines.push(`[${MARK[step.status]}] ${step.step}: ${step.detail}`);
    if (step.hint !== undefined) lines.push(`       hint: ${step.hint}`);
  }
  const usable = report.servers.filter((s) => s.url !== undefined);
  lines.push(
    usable.length === 0
      ? "result: no usable agy language server"
      : `result: ${usable.length} usable server${usable.length === 1 ? "" : "s"}: ${usable
          .map((s) => `pid ${s.pid} at ${s.url}${guessed.has(s.pid) ? " (guessed: its fds are unreadable, so this listener is not proven to be its own)" : ""}`)
          .join(", ")}`,
  );
  // Details quote what discovery saw (paths, server messages): each line shown safe.
  return `${lines.map((line) => terminalText(line)).join("\n")}\n`;
}

export function createDoctorCommand(options: DoctorCommandOptions = {}): Command {
  const run = options.run ?? spawnCommand;
  const discover = options.discover ?? ((scope: DiscoveryScope) => discoverServers({ run, ...scope }));
  return defineCommand({
    name: "doctor",
    summary: "explain how discovery finds agy's language server, and what failed",
    help: HELP,
    options: { json: { type: "boolean" }, report: { type: "boolean" }, ...CONNECTION_OPTIONS, ...PANE_OPTION },
    async run(io, args) {
      if (args.values.report === true) {
        // The start of a conversation id will do, as for the session commands.
        const { connection } = await resolveConversationTarget(io, { connection: connectionArgs(args.values, io.env) });
        return runDoctorReport(io, connection.conversationId === undefined ? args.values : { ...args.values, conversation: connection.conversationId });
      }
      if (["url", "csrf-token", "conversation", "pane"].some((k) => (args.values as Record<string, unknown>)[k] !== undefined)) {
        throw new UsageError("--conversation, --pane, --url and --csrf-token go with --report; run `agy-bridge doctor --help`");
      }
      const scope = discoveryScope(tmuxServerOf("doctor", args.values));
      const [result, tmux] = await Promise.all([discover(scope), tmuxVersion(run)]);
      const servers = result.servers.map(toSessionEntry);
      const ok = servers.some((s) => s.url !== undefined);
      const report: DoctorReport = { ok, node: options.nodeVersion ?? process.version, tmux, steps: result.steps, servers };
      io.stdout.write(args.values.json === true ? `${JSON.stringify(report)}\n` : human(report, guessedPids(result.servers)));
      if (!ok) {
        const failed = result.steps.find((s) => s.status === "fail");
        io.stderr.write(`${terminalText(`agy-bridge doctor: no usable agy language server was found${failed === undefined ? "" : ` (${failed.detail})`}`)}\n`);
      }
      return ok ? 0 : 1;
    },
  });
}

export const doctorCommand = createDoctorCommand();
