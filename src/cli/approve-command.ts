/**
 * `agy-bridge approve`: allow a pending permission over RPC.
 */
import { CONNECTION_HELP, CONNECTION_OPTIONS } from "./args.js";
import { defineCommand } from "./command.js";
import { runAnswer } from "./answer-commands.js";
import { emptyOption, PANE_HELP, PANE_OPTION } from "./session-connect.js";

const HELP = `Usage: agy-bridge approve [--interaction ID] [--conversation ID] [--url URL] [--scope S] [--json]

Allows a pending permission (a command agy wants to run) over RPC, re-reading
the step first: the step that asked if it still waits, else agy's retry of it
after a timeout, never another prompt. Without --interaction, the single
pending permission of the conversation; when several wait, they are listed.
When --pane is given, agy's own prompt in the TUI is closed too.

Options:
  --interaction ID    the interaction to approve (from \`agy-bridge watch\`)
  --scope S           a permission scope, e.g. PERMISSION_SCOPE_CONVERSATION (newer agy builds)
  --instruction TEXT  accepted for symmetry with deny; agy takes no text with an approval
  --json              print the result as one JSON line: {"interactionId","result","stepIndex"?}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Results: delivered (exit 0); already_resolved, timed_out, not_found (exit 1,
nothing sent). Exit 1 with one sentence on any other failure, 2 on a usage error.
`;

export const approveCommand = defineCommand({
  name: "approve",
  summary: "allow a pending permission over RPC",
  help: HELP,
  options: {
    ...CONNECTION_OPTIONS,
    ...PANE_OPTION,
    interaction: { type: "string" },
    scope: { type: "string" },
    instruction: { type: "string" },
    json: { type: "boolean" },
  },
  async run(io, { values }) {
    const empty = emptyOption(values, ["url", "csrf-token", "conversation", "pane", "interaction", "scope"]);
    if (empty !== undefined) {
      io.stderr.write(`agy-bridge approve: --${empty} needs a non-empty value; run \`agy-bridge approve --help\`\n`);
      return 2;
    }
    return runAnswer(io, {
      command: "approve",
      values,
      kinds: ["permission"],
      what: "permission",
      deliver: (session, id) => session.approve(id, values.scope === undefined ? {} : { scope: values.scope }),
    });
  },
});
