/**
 * `agy-bridge answer`: answer a pending question over RPC.
 */
import { UsageError } from "./args.js";
import { answerVia, defineAnswerCommand } from "./answer-commands.js";

const HELP = `Usage: agy-bridge answer [--interaction ID] --option ID... [--write-in TEXT] [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--via rpc|tui] [--json]

Answers a pending question over RPC with option ids ("1".."N", as \`agy-bridge
watch\` shows them) and/or free text; the question's own text is sent back
verbatim. The step is re-read first: the question that asked if it still
waits, else agy's retry of it after a timeout. Without --interaction, the
single pending question. The answer is for the first question of the step.
If agy keeps its own dialog drawn in --pane (or the pane discovery finds),
it is closed only with a key safe for an answered step on agy's version
(docs/tmux.md): Escape on agy 1.0.x, the chosen option's digit on 1.2.x;
otherwise it is left and the result says so. With --via tui the dialog is
answered there instead: one --option, no write-in (text typed into a dialog
confirms it), with the option's digit alone where a digit answers at once
(agy 1.2.x), else the pointer moved one key at a time and Enter only on it.

Options:
  --interaction ID    the question to answer (from \`agy-bridge watch\`)
  --option ID         an option id; repeat for a multi-select question
  --write-in TEXT     free text, alone or with options
`;

export const answerCommand = defineAnswerCommand({
  name: "answer",
  summary: "answer a pending question over RPC",
  help: HELP,
  options: {
    option: { type: "string", multiple: true },
    "write-in": { type: "string" },
  },
  kinds: ["question"],
  what: "question",
  prepare(values) {
    const optionIds = values.option ?? [];
    const writeIn = values["write-in"];
    if (optionIds.length === 0 && (writeIn === undefined || writeIn === "")) {
      throw new UsageError("give at least one --option or a --write-in; run `agy-bridge answer --help`");
    }
    const via = answerVia("answer", values.via);
    return { verdict: { action: "answer", optionIds, ...(writeIn === undefined ? {} : { writeIn }) }, ...via };
  },
});
