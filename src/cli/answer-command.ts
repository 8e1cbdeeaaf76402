/**
 * `agy-bridge answer`: answer a pending question over RPC.
 */
import { CONNECTION_HELP, CONNECTION_OPTIONS } from "./args.js";
import { defineCommand } from "./command.js";
import { runAnswer } from "./answer-commands.js";
import { emptyOption, PANE_HELP, PANE_OPTION } from "./session-connect.js";

const HELP = `Usage: agy-bridge answer [--interaction ID] --option ID... [--write-in TEXT] [--conversation ID] [--url URL] [--json]

Answers a pending question over RPC with option ids ("1".."N", as \`agy-bridge
watch\` shows them) and/or free text; the question's own text is sent back
verbatim. The step is re-read first: the question that asked if it still
waits, else agy's retry of it after a timeout. Without --interaction, the
single pending question. The answer is for the first question of the step.

Options:
  --interaction ID    the question to answer (from \`agy-bridge watch\`)
  --option ID         an option id; repeat for a multi-select question
  --write-in TEXT     free text, alone or with options
  --json              print the result as one JSON line: {"interactionId","result","stepIndex"?}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Results: delivered (exit 0); already_resolved, timed_out, not_found (exit 1,
nothing sent). Exit 1 with one sentence on any other failure, 2 on a usage error.
`;

export const answerCommand = defineCommand({
  name: "answer",
  summary: "answer a pending question over RPC",
  help: HELP,
  options: {
    ...CONNECTION_OPTIONS,
    ...PANE_OPTION,
    interaction: { type: "string" },
    option: { type: "string", multiple: true },
    "write-in": { type: "string" },
    json: { type: "boolean" },
  },
  async run(io, { values }) {
    const empty = emptyOption(values, ["url", "csrf-token", "conversation", "pane", "interaction"]);
    if (empty !== undefined) {
      io.stderr.write(`agy-bridge answer: --${empty} needs a non-empty value; run \`agy-bridge answer --help\`\n`);
      return 2;
    }
    const optionIds = values.option ?? [];
    const writeIn = values["write-in"];
    if (optionIds.length === 0 && (writeIn === undefined || writeIn === "")) {
      io.stderr.write("agy-bridge answer: give at least one --option or a --write-in; run `agy-bridge answer --help`\n");
      return 2;
    }
    return runAnswer(io, {
      command: "answer",
      values,
      kinds: ["question"],
      what: "question",
      deliver: (session, id) => session.answer(id, { optionIds, ...(writeIn === undefined ? {} : { writeIn }) }),
    });
  },
});
