/**
 * `agy-bridge deny`: refuse a pending permission (or decline a question) over RPC.
 */
import { answerVia, defineAnswerCommand } from "./answer-commands.js";

const HELP = `Usage: agy-bridge deny [--interaction ID] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--instruction TEXT] [--via rpc|tui] [--json]
       agy-bridge deny … --remember [--scope conversation|workspace|everywhere] [--rule TEXT] [--dry-run]

Refuses a pending permission over RPC (or declines a question), re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending interaction; when several wait, they are listed. If agy keeps its
own dialog drawn in --pane (or the pane discovery finds), it is closed only
with a key safe for an answered step on agy's version (docs/tmux.md), else
left and the result says so. With --via tui the dialog is declined there
instead (no instruction then): its "No" row is found by its label (it is 4,
2 or 3 depending on the dialog) and chosen with its digit alone where a
digit answers at once (agy 1.2.x), else with the pointer moved onto it one
key at a time and Enter only once the screen shows it there; a question is
skipped with Escape where that declines it. Never a positional guess.

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
    return { verdict: { action: "deny", ...(values.instruction === undefined ? {} : { instruction: values.instruction }) }, ...via };
  },
});
