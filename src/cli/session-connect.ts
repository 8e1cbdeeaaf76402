/**
 * What the session commands share: attaching from the connection options
 * (discovery when `--url` is absent), a pane given as `--pane`, and the
 * failure sentence. Nothing here prints a token.
 */
import { AgyBridgeError } from "../errors.js";
import { AgySession, type AgySessionApi, type AttachOptions, type PendingSummary } from "../session/index.js";
import { connectionArgs } from "./args.js";
import type { CliIo } from "./command.js";

export const PANE_OPTION = { pane: { type: "string" } } as const;

export const PANE_HELP = `  --pane P            agy's tmux pane (%N or session:window.pane): discovery starts there`;

/** Options the session commands accept besides the connection ones, for tests. */
export interface SessionCommandDeps {
  attach?: (options: AttachOptions) => Promise<AgySessionApi>;
}

export async function attachFromArgs(
  io: CliIo,
  values: { url?: string | undefined; "csrf-token"?: string | undefined; conversation?: string | undefined; pane?: string | undefined },
  extra: Partial<AttachOptions> = {},
  deps: SessionCommandDeps = {},
): Promise<AgySessionApi> {
  const conn = connectionArgs(values, io.env);
  const attach = deps.attach ?? AgySession.attach;
  return attach({
    ...(conn.url === undefined ? {} : { url: conn.url }),
    ...(conn.csrfToken === undefined ? {} : { csrfToken: conn.csrfToken }),
    ...(conn.conversationId === undefined ? {} : { conversationId: conn.conversationId }),
    ...(values.pane === undefined ? {} : { pane: { target: values.pane } }),
    signal: io.signal,
    ...extra,
  });
}

/** The one sentence for a failure, never with a token in it. */
export function failureText(command: string, error: unknown): string {
  const e = AgyBridgeError.from(error);
  return `agy-bridge ${command}: ${e.message.replace(/\s+$/, "")}`;
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
