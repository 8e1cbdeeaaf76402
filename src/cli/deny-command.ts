/**
 * `agy-bridge deny`: refuse a pending permission (or decline a question) over RPC.
 */
import { CONNECTION_HELP, CONNECTION_OPTIONS } from "./args.js";
import { defineCommand } from "./command.js";
import { runAnswer } from "./answer-commands.js";
import { emptyOption, PANE_HELP, PANE_OPTION } from "./session-connect.js";

const HELP = `Usage: agy-bridge deny [--interaction ID] [--conversation ID] [--url URL] [--instruction TEXT] [--json]

Refuses a pending permission over RPC (or declines a question), re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending interaction; when several wait, they are listed. When --pane is
given, agy's own prompt in the TUI is closed too.

Options:
  --interaction ID    the interaction to deny (from \`agy-bridge watch\`)
  --instruction TEXT  what the model should do instead (sent with a permission deny; newer agy builds)
  --json              print the result as one JSON line: {"interactionId","result","stepIndex"?}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Results: delivered (exit 0); already_resolved, timed_out, not_found (exit 1,
nothing sent). Exit 1 with one sentence on any other failure, 2 on a usage error.
`;

export const denyCommand = defineCommand({
  name: "deny",
  summary: "refuse a pending permission (or decline a question) over RPC",
  help: HELP,
  options: {
    ...CONNECTION_OPTIONS,
    ...PANE_OPTION,
    interaction: { type: "string" },
    instruction: { type: "string" },
    json: { type: "boolean" },
  },
  async run(io, { values }) {
    const empty = emptyOption(values, ["url", "csrf-token", "conversation", "pane", "interaction"]);
    if (empty !== undefined) {
      io.stderr.write(`agy-bridge deny: --${empty} needs a non-empty value; run \`agy-bridge deny --help\`\n`);
      return 2;
    }
    return runAnswer(io, {
      command: "deny",
      values,
      kinds: ["permission", "question"],
      what: "interaction",
      deliver: (session, id) => session.deny(id, values.instruction === undefined ? {} : { instruction: values.instruction }),
    });
  },
});
