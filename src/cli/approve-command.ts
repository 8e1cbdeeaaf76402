/**
 * `agy-bridge approve`: allow a pending permission over RPC.
 */
import { defineAnswerCommand } from "./answer-commands.js";

const HELP = `Usage: agy-bridge approve [--interaction ID] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--scope S] [--json]

Allows a pending permission (a command agy wants to run) over RPC, re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending permission of the conversation; when several wait, they are listed.
When --pane is given, agy's own prompt in the TUI is closed too.

Options:
  --interaction ID    the interaction to approve (from \`agy-bridge watch\`)
  --scope S           a permission scope, e.g. PERMISSION_SCOPE_CONVERSATION (newer agy builds)
  --instruction TEXT  accepted for symmetry with deny; agy takes no text with an approval
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
  prepare: (values) => (session, id) => session.approve(id, values.scope === undefined ? {} : { scope: values.scope }),
});
