/**
 * `agy-bridge deny`: refuse a pending permission (or decline a question) over RPC.
 */
import { answerVia, defineAnswerCommand } from "./answer-commands.js";

const HELP = `Usage: agy-bridge deny [--interaction ID] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--instruction TEXT] [--via rpc|tui] [--json]

Refuses a pending permission over RPC (or declines a question), re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending interaction; when several wait, they are listed. agy's own dialog
in the TUI is then closed with Escape in --pane, or in the pane discovery
finds for the agy that owns the conversation. With --via tui the dialog is
declined there with Escape instead (no instruction then). A deny never
presses Enter or a digit: in agy's arrow menus those can approve.

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
  prepare(values) {
    const via = answerVia("deny", values.via);
    return (session, id) => session.deny(id, { ...(values.instruction === undefined ? {} : { instruction: values.instruction }), ...via });
  },
});
