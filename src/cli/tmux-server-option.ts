/**
 * `-L NAME` / `-S PATH`: which tmux server a command looks at, spelled as
 * tmux spells it (and as `send` does). Without either, tmux's default server.
 */
import type { TmuxServerRef } from "../discovery/index.js";
import { AgyBridgeError } from "../errors.js";
import { socketArgs } from "../tmux/target.js";
import { UsageError } from "./args.js";

export const TMUX_SERVER_OPTIONS = {
  "socket-name": { type: "string", short: "L" },
  "socket-path": { type: "string", short: "S" },
} as const;

/** Help lines for {@link TMUX_SERVER_OPTIONS}; `what` ends "the tmux server …". */
export function tmuxServerHelp(what: string): string {
  return `  -L NAME             ${what}, by socket name (tmux -L)
  -S PATH             ${what}, by socket path (tmux -S)`;
}

/**
 * Help lines for -L/-S on a command that offers many sessions (serve, mcp,
 * acp, relay): they scope which agy it offers (discovery/tmux-scope.ts).
 * `column` is where the command's descriptions start.
 */
export function tmuxScopeHelp(column = 22): string {
  const flag = (text: string) => `  ${text}`.padEnd(column);
  return `${flag("-L NAME")}offer only agy running in a pane of this tmux server (tmux -L)
${flag("-S PATH")}the same, by socket path (tmux -S); without either, every agy
${flag("")}on this machine (panes matched on tmux's default server)`;
}

/**
 * The server `-L` / `-S` name, or undefined for the default one. Throws
 * {@link UsageError} for an empty or malformed value or both flags; the
 * message never repeats the value.
 */
export function tmuxServerOf(command: string, values: { "socket-name"?: string | undefined; "socket-path"?: string | undefined }): TmuxServerRef | undefined {
  const hint = `run \`agy-bridge ${command} --help\``;
  const name = values["socket-name"];
  const path = values["socket-path"];
  if (name !== undefined && path !== undefined) throw new UsageError(`give -L or -S, not both; ${hint}`);
  if (name === "") throw new UsageError(`-L needs a non-empty value; ${hint}`);
  if (path === "") throw new UsageError(`-S needs a non-empty value; ${hint}`);
  try {
    socketArgs(name !== undefined ? { name } : path !== undefined ? { path } : undefined);
  } catch (error) {
    throw new UsageError(`${AgyBridgeError.from(error).message.replace(/\.$/, "")}; ${hint}`);
  }
  return name !== undefined ? { socketName: name } : path !== undefined ? { socketPath: path } : undefined;
}
