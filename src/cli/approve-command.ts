/**
 * `agy-bridge approve`: allow a pending permission over RPC.
 */
import { UsageError } from "./args.js";
import { answerVia, defineAnswerCommand } from "./answer-commands.js";

/** agy's permission scopes (spike-notes §10.6, newer builds); `--scope` takes the name or its last word. */
export const PERMISSION_SCOPES = [
  "PERMISSION_SCOPE_ONCE",
  "PERMISSION_SCOPE_CONVERSATION",
  "PERMISSION_SCOPE_WORKSPACE",
  "PERMISSION_SCOPE_GLOBAL",
  "PERMISSION_SCOPE_PROJECT",
] as const;

/** `conversation` or `PERMISSION_SCOPE_CONVERSATION` → the wire name; anything else is a usage error listing the choices. */
export function permissionScope(given: string): (typeof PERMISSION_SCOPES)[number] {
  const name = given.toUpperCase().startsWith("PERMISSION_SCOPE_") ? given.toUpperCase() : `PERMISSION_SCOPE_${given.toUpperCase()}`;
  const found = PERMISSION_SCOPES.find((scope) => scope === name);
  if (found !== undefined) return found;
  const short = PERMISSION_SCOPES.map((scope) => scope.slice("PERMISSION_SCOPE_".length).toLowerCase());
  throw new UsageError(`--scope takes one of ${short.join(", ")} (or the full name, e.g. PERMISSION_SCOPE_ONCE); run \`agy-bridge approve --help\``);
}

const HELP = `Usage: agy-bridge approve [--interaction ID] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--scope S] [--via rpc|tui] [--json]
       agy-bridge approve … --remember [--scope conversation|workspace|everywhere] [--rule TEXT] [--dry-run]

Allows a pending permission (a command agy wants to run) over RPC, re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending permission of the conversation; when several wait, they are listed.
If agy keeps its own dialog drawn in --pane (or the pane discovery finds for
the agy that owns the conversation), it is closed only with a key safe for
an answered step on agy's version (docs/tmux.md): Escape on agy 1.0.x, the
"Yes" row's digit on 1.2.x — never Escape there, which would cancel the
command just approved; otherwise it is left and the result says so. With
--via tui the dialog is answered there instead: "Yes" (the plain row 1) by
its digit alone where a digit answers at once (agy 1.2.x), else the pointer
moved one key at a time and Enter pressed only on it.

Options:
  --interaction ID    the interaction to approve (from \`agy-bridge watch\`)
  --scope S           a permission scope (newer agy builds): once, conversation, workspace,
                      global or project (or PERMISSION_SCOPE_CONVERSATION, …)
  --instruction TEXT  refused (exit 2): agy takes no text with an approval; give it with deny
`;

export const approveCommand = defineAnswerCommand({
  name: "approve",
  summary: "allow a pending permission over RPC",
  help: HELP,
  options: {
    scope: { type: "string" },
    instruction: { type: "string" },
  },
  nonEmpty: ["scope"],
  kinds: ["permission"],
  what: "permission",
  prepare(values) {
    // Checked before anything is sent: an unknown scope used to reach agy as it was typed.
    const scope = values.scope === undefined || values.scope === "" ? undefined : permissionScope(values.scope);
    const via = answerVia("approve", values.via);
    return { verdict: { action: "approve", ...(scope === undefined ? {} : { scope }) }, ...via };
  },
});
