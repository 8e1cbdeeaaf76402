/**
 * `agy-bridge` entry: dispatches to one file per subcommand.
 */
import type { CliIo, Command } from "./command.js";
import { demoCommand } from "./demo-command.js";
import { mapCommand } from "./map-command.js";
import { simCommand } from "./sim-command.js";

export const COMMANDS: readonly Command[] = [demoCommand, mapCommand, simCommand];

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
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    io.stderr.write(`agy-bridge: unknown command "${name}"; run \`agy-bridge --help\` for the list\n`);
    return 2;
  }
  if (command.parsesArgs !== true && (rest.includes("--help") || rest.includes("-h"))) {
    io.stdout.write(command.help.endsWith("\n") ? command.help : `${command.help}\n`);
    return 0;
  }
  return command.run({ ...io, argv: rest });
}
