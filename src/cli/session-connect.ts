/**
 * What the session commands share: attaching from the connection options
 * (discovery when `--url` is absent), a pane given as `--pane`, and the
 * failure sentence. Nothing here prints a token.
 */
import { cachedLocate } from "./cached-locate.js";
import type { PaneRef } from "../discovery/index.js";
import { AgyBridgeError } from "../errors.js";
import type { AgySessionApi, AttachOptions, PendingSummary } from "../session/index.js";
import { isPaneTarget } from "../tmux/target.js";
import { connectionArgs, UsageError, type ConnectionArgs } from "./args.js";
import type { CliIo } from "./command.js";
import { TMUX_SERVER_OPTIONS, tmuxServerHelp, tmuxServerOf } from "./tmux-server-option.js";
import { terminalText } from "./terminal-text.js";

/** `--pane` and the tmux server it is on, spelled as `send` spells them. */
export const PANE_OPTION = { pane: { type: "string" }, ...TMUX_SERVER_OPTIONS } as const;

export const PANE_HELP = `  --pane TARGET       agy's tmux pane: a pane id like %3, or an exact session =main;
                      discovery starts there, and an answer closes the TUI's own prompt
                      (without it, the pane holding the agy discovery binds is found
                      on the default tmux server and the sockets in your tmux directory)
${tmuxServerHelp("the tmux server of --pane")}`;

/** The option values the session commands share. */
export interface SessionValues {
  url?: string | undefined;
  "csrf-token"?: string | undefined;
  conversation?: string | undefined;
  pane?: string | undefined;
  "socket-name"?: string | undefined;
  "socket-path"?: string | undefined;
}

/** Where a session command attaches: the server (or what discovery needs) and the pane. */
export interface SessionTarget {
  connection: ConnectionArgs;
  pane?: PaneRef;
}

/**
 * Reads the connection and pane options; throws {@link UsageError} (exit 2)
 * for an empty value, a URL that does not parse, a malformed pane or socket,
 * and -L/-S without --pane or together. Messages never repeat a value.
 */
export function sessionTarget(command: string, values: SessionValues, env: CliIo["env"]): SessionTarget {
  const hint = `run \`agy-bridge ${command} --help\``;
  const empty = emptyOption(values as Record<string, unknown>, ["url", "csrf-token", "conversation", "pane"]);
  if (empty !== undefined) throw new UsageError(`--${empty} needs a non-empty value; ${hint}`);
  const connection = connectionArgs(values, env);
  const server = tmuxServerOf(command, values);
  if (values.pane === undefined) {
    if (server !== undefined) throw new UsageError(`-L and -S choose the tmux server of --pane; give --pane too; ${hint}`);
    return { connection };
  }
  if (!isPaneTarget(values.pane)) throw new UsageError(`--pane must be a pane id like %3 or an exact session name like =main; ${hint}`);
  return { connection, pane: { target: values.pane, ...server } };
}

/** Options the session commands accept besides the connection ones, for tests. */
export interface SessionCommandDeps {
  attach?: (options: AttachOptions) => Promise<AgySessionApi>;
}

/** Attaches to what {@link sessionTarget} read (discovery when there is no URL). */
export async function attachFromArgs(
  io: CliIo,
  target: SessionTarget,
  extra: Partial<AttachOptions> = {},
  deps: SessionCommandDeps = {},
): Promise<AgySessionApi> {
  const conn = target.connection;
  // The session layer (and the RPC stack under it) loads only to attach: `--help` and usage errors never pay for it.
  // Its own file, not the barrel, which would load the verdict schemas (zod) and the fleet's session sources too.
  const attach = deps.attach ?? (await import("../session/agy-session.js")).AgySession.attach;
  return attach({
    ...(conn.url === undefined ? {} : { url: conn.url }),
    ...(conn.csrfToken === undefined ? {} : { csrfToken: conn.csrfToken }),
    ...(conn.conversationId === undefined ? {} : { conversationId: conn.conversationId }),
    ...(target.pane === undefined ? {} : { pane: target.pane }),
    signal: io.signal,
    // Through discovery, the CLI's discovery cache (docs/discovery.md): a second command skips the handshakes.
    ...(conn.url === undefined ? { locate: cachedLocate(io.env) } : {}),
    ...extra,
  });
}

/** The one sentence for a failure, never with a token in it. */
export function failureText(command: string, error: unknown): string {
  const e = AgyBridgeError.from(error);
  // The message may quote agy's text (a server's error): one safe line.
  return `agy-bridge ${command}: ${terminalText(e.message.replace(/\s+$/, ""))}`;
}

/** Empty option values are usage errors (exit 2), like everywhere else. */
export function emptyOption(values: Record<string, unknown>, names: readonly string[]): string | undefined {
  return names.find((n) => values[n] === "");
}

/** The single pending interaction of `kind`, or an error sentence naming the choices. */
export function singlePending(pending: PendingSummary[], kinds: ReadonlyArray<PendingSummary["kind"]>, what: string): PendingSummary | string {
  const matching = pending.filter((p) => kinds.includes(p.kind));
  if (matching.length === 1) return matching[0]!;
  if (matching.length === 0) return `no ${what} is pending in this conversation`;
  const list = matching.map((p) => `${p.interactionId} (step ${p.stepIndex}: ${p.summary})`).join(", ");
  return `${matching.length} ${what}s are pending; choose one with --interaction: ${list}`;
}
