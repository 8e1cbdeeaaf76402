/**
 * `agy-bridge deny`: refuse a pending permission (or decline a question) over RPC.
 */
import { defineAnswerCommand } from "./answer-commands.js";

const HELP = `Usage: agy-bridge deny [--interaction ID] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--instruction TEXT] [--json]

Refuses a pending permission over RPC (or declines a question), re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending interaction; when several wait, they are listed. When --pane is
given, agy's own prompt in the TUI is closed too.

Options:
  --interaction ID    the interaction to deny (from \`agy-bridge watch\`)
  --instruction TEXT  what the model should do instead (sent with a permission deny; newer agy builds)
`;

export const denyCommand = defineAnswerCommand({
  name: "deny",
  summary: "refuse a pending permission (or decline a question) over RPC",
  help: HELP,
  options: {
    instruction: { type: "string" },
  },
  kinds: ["permission", "question"],
  what: "interaction",
  prepare: (values) => (session, id) => session.deny(id, values.instruction === undefined ? {} : { instruction: values.instruction }),
});
