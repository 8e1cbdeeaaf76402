/**
 * `agy-bridge` entry: dispatches to one file per subcommand. Command modules
 * load only when their command runs, so `agy-bridge map` does not pay for the
 * simulator, the HTTP server or discovery.
 */
import { readFile } from "node:fs/promises";
import type { CliIo, Command } from "./command.js";
import { safeStderr, terminalText } from "./terminal-text.js";

/** A subcommand as the dispatcher knows it before loading it. */
export interface CommandEntry {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: "demo", summary: "a supervised session against the simulator (the Quick start)", load: async () => (await import("./demo-command.js")).demoCommand },
  { name: "map", summary: "map agy steps or stream frames to NDJSON events", load: async () => (await import("./map-command.js")).mapCommand },
  {
    name: "sessions",
    summary: "list the agy language servers on this machine and their conversations",
    load: async () => (await import("./sessions-command.js")).sessionsCommand,
  },
  {
    name: "doctor",
    summary: "explain how discovery finds agy's language server, and what failed",
    load: async () => (await import("./doctor-command.js")).doctorCommand,
  },
  { name: "watch", summary: "follow a conversation as events (NDJSON with --json)", load: async () => (await import("./watch-command.js")).watchCommand },
  { name: "approve", summary: "allow a pending permission over RPC", load: async () => (await import("./approve-command.js")).approveCommand },
  { name: "deny", summary: "refuse a pending permission (or decline a question) over RPC", load: async () => (await import("./deny-command.js")).denyCommand },
  { name: "answer", summary: "answer a pending question over RPC", load: async () => (await import("./answer-command.js")).answerCommand },
  {
    name: "interrupt",
    summary: "stop the agent's current work (cancel, or deny a waiting prompt)",
    load: async () => (await import("./interrupt-command.js")).interruptCommand,
  },
  {
    name: "capture",
    summary: "record a live agy conversation as a redacted fixture directory",
    load: async () => (await import("./capture-command.js")).captureCommand,
  },
  { name: "sim", summary: "run the simulated agy (language server + TUI)", load: async () => (await import("./sim-command.js")).simCommand },
  { name: "send", summary: "type a user turn into agy's TUI through tmux", load: async () => (await import("./send-command.js")).sendCommand },
  {
    name: "screen",
    summary: "read agy's screen in a tmux pane (or a saved capture) and say what is on it",
    load: async () => (await import("./screen-command.js")).screenCommand,
  },
  { name: "audit", summary: "read the log of decisions about agy's requests", load: async () => (await import("./audit-command.js")).auditCommand },
  {
    name: "policy",
    summary: "check what a policy file decides (policy check / policy test)",
    load: async () => (await import("./policy-command.js")).policyCommand,
  },
  {
    name: "serve",
    summary: "serve every agy session over HTTP + SSE, with an approval page",
    load: async () => (await import("./serve-command.js")).serveCommand,
  },
  {
    name: "pair",
    summary: "print a one-time link and QR code that pairs a phone with the approval page",
    load: async () => (await import("./pair-command.js")).pairCommand,
  },
  {
    name: "devices",
    summary: "list the devices paired with the approval page, or revoke one",
    load: async () => (await import("./devices-command.js")).devicesCommand,
  },
  {
    name: "acp",
    summary: "an Agent Client Protocol agent on stdio: editors join a running agy session",
    load: async () => (await import("./acp-command.js")).acpCommand,
  },
  {
    name: "mcp",
    summary: "an MCP server for agents: sessions, events, turns and answers as tools",
    load: async () => (await import("./mcp-command.js")).mcpCommand,
  },
  {
    name: "relay",
    summary: "publish this machine's agy sessions to Redis Streams and take commands from it",
    load: async () => (await import("./relay-command.js")).relayCommand,
  },
];

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: agy-bridge <command> [options]",
    "",
    "Supervise attended Google Antigravity (agy) sessions from code.",
    "",
    "Commands:",
    ...lines,
    "",
    "Run `agy-bridge <command> --help` for a command's options; `agy-bridge --version` (-V) prints the version.",
    "",
  ].join("\n");
}

/** The package's version, read from the package.json beside `src/` and `dist/` alike. */
async function version(): Promise<string> {
  const text = await readFile(new URL("../../package.json", import.meta.url), "utf8");
  return String((JSON.parse(text) as { version?: unknown }).version);
}

export async function main(given: CliIo): Promise<number> {
  // Every diagnostic of every command passes the terminal filter (terminal-text.ts).
  const io: CliIo = { ...given, stderr: safeStderr(given.stderr) };
  const [name, ...rest] = io.argv;
  if (name === undefined) {
    // No command is a usage error: the help goes where diagnostics go.
    io.stderr.write(topHelp());
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(topHelp());
    return 0;
  }
  if (name === "--version" || name === "-V") {
    io.stdout.write(`${await version()}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    io.stderr.write(`agy-bridge: unknown command "${terminalText(name)}"; run \`agy-bridge --help\` for the list\n`);
    return 2;
  }
  const command = await entry.load();
  if (command.parsesArgs !== true && (rest.includes("--help") || rest.includes("-h"))) {
    io.stdout.write(command.help.endsWith("\n") ? command.help : `${command.help}\n`);
    return 0;
  }
  return command.run({ ...io, argv: rest });
}
