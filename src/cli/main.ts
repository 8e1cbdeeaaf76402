/**
 * `agy-bridge` entry: dispatches to one file per subcommand. Command modules
 * load only when their command runs, so `agy-bridge map` does not pay for the
 * simulator, the HTTP server or discovery.
 */
import type { CliIo, Command } from "./command.js";

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
  { name: "sim", summary: "run the simulated agy (language server + TUI)", load: async () => (await import("./sim-command.js")).simCommand },
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
    "Run `agy-bridge <command> --help` for a command's options.",
    "",
  ].join("\n");
}

export async function main(io: CliIo): Promise<number> {
  const [name, ...rest] = io.argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(topHelp());
    return name === undefined ? 2 : 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    io.stderr.write(`agy-bridge: unknown command "${name}"; run \`agy-bridge --help\` for the list\n`);
    return 2;
  }
  const command = await entry.load();
  if (command.parsesArgs !== true && (rest.includes("--help") || rest.includes("-h"))) {
    io.stdout.write(command.help.endsWith("\n") ? command.help : `${command.help}\n`);
    return 0;
  }
  return command.run({ ...io, argv: rest });
}
