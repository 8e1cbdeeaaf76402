/**
 * What `approve`, `deny` and `answer` share: their common options and help
 * lines, the empty-value check, and the body: attach, pick the interaction
 * (given, or the single pending one of its kind), deliver, print the typed
 * result. Exit 0 only when the answer was delivered.
 */
import { recordCliAnswer } from "./cli-audit.js";
import type { AgySessionApi, AnswerResult, AnswerVia, PendingSummary } from "../session/index.js";
import { describeAnswer } from "../session/answer-text.js";
import { respond, type AnsweredRecord } from "../session/respond.js";
import type { Verdict } from "../session/verdict.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, UsageError, type ParseArgsOptionsConfig, type ParsedArgs } from "./args.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { defineCommand, type CliIo, type Command } from "./command.js";
import {
  attachFromArgs,
  emptyOption,
  failureText,
  PANE_HELP,
  PANE_OPTION,
  sessionTarget,
  singlePending,
  type SessionCommandDeps,
  type SessionTarget,
} from "./session-connect.js";
import {
  proposalText,
  proposeFor,
  REMEMBER_HELP,
  REMEMBER_OPTIONS,
  rememberPlan,
  saveRemembered,
  type RememberPlan,
  type RememberValues,
} from "./remember-option.js";
import { terminalText } from "./terminal-text.js";

/** The options every answering command takes, besides its own. */
const ANSWER_OPTIONS = {
  ...CONNECTION_OPTIONS,
  ...PANE_OPTION,
  interaction: { type: "string" },
  via: { type: "string" },
  json: { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

/**
 * `--via rpc` (default) or `--via tui` as the session option; anything else
 * is a usage error. `tui` answers in agy's dialog by moving its pointer.
 */
export function answerVia(command: string, value: string | undefined): { via?: AnswerVia } {
  if (value === undefined || value === "rpc") return value === undefined ? {} : { via: "rpc" };
  if (value === "tui") return { via: "tui" };
  throw new UsageError(`--via takes rpc or tui; run \`agy-bridge ${command} --help\``);
}

/** Shared options besides the connection and pane ones that may not be given an empty value. */
const NON_EMPTY = ["interaction"] as const;

/** The help that follows a command's own option lines. */
const HELP_TAIL = `  --via rpc|tui       rpc (default): answer over RPC, then close agy's own dialog
                      only with a key safe on agy's version; tui: answer in
                      agy's dialog with the keys the key table gives that version
  --json              print the result as one JSON line: {"interactionId","result","stepIndex"?}
                      ({"result":"none_pending"|"several_pending","pending":[…]} when none was chosen)
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Results: delivered (exit 0); already_resolved, timed_out, not_found,
none_pending, several_pending (exit 1, nothing sent). Exit 1 with one
sentence on any other failure, 2 on a usage error.
`;

/** The answer a command gives, as the one `Verdict` of every door, and how it travels. */
export interface Deliver {
  verdict: Verdict;
  via?: AnswerVia;
}

/** One answering command: what it answers, its own options, and how it delivers. */
export interface AnswerCommandSpec<O extends ParseArgsOptionsConfig> {
  name: string;
  summary: string;
  /** The help down to the command's own option lines; the shared lines and the results follow. */
  help: string;
  /** The command's own options besides the shared ones. */
  options: O;
  /** Its own options that may not be empty either, checked after the shared ones. */
  nonEmpty?: ReadonlyArray<keyof O & string>;
  /** The pending kinds it may pick when no `--interaction` is given. */
  kinds: ReadonlyArray<PendingSummary["kind"]>;
  /** What it answers, for the "none / several pending" sentences. */
  what: string;
  /** Reads the command's own options (a {@link UsageError} exits 2) and returns how to deliver. */
  prepare(values: ParsedArgs<typeof ANSWER_OPTIONS & O>["values"]): Deliver;
}

/** Defines `approve`, `deny` or `answer` on the shared options, checks and body. */
export function defineAnswerCommand<O extends ParseArgsOptionsConfig>(spec: AnswerCommandSpec<O>): Command {
  // approve and deny can remember their answer as a rule (docs/policy.md, "Learned rules").
  const remembers = spec.name === "approve" || spec.name === "deny";
  return defineCommand({
    name: spec.name,
    summary: spec.summary,
    help: `${spec.help}${remembers ? REMEMBER_HELP : ""}${HELP_TAIL}`,
    options: { ...ANSWER_OPTIONS, ...spec.options, ...(remembers ? REMEMBER_OPTIONS : {}) },
    async run(io, { values }) {
      const target = await resolveConversationTarget(io, sessionTarget(spec.name, values, io.env));
      const empty = emptyOption(values, [...NON_EMPTY, ...(spec.nonEmpty ?? [])]);
      if (empty !== undefined) throw new UsageError(`--${empty} needs a non-empty value; run \`agy-bridge ${spec.name} --help\``);
      const instruction = (values as { instruction?: string | undefined }).instruction;
      if (spec.name === "approve" && instruction !== undefined && !(await import("../session/verdict.js")).instructionAllowed("permission", "approve")) {
        throw new UsageError("agy's approve carries no instruction, so --instruction would never reach agy; approve without it, or deny with --instruction");
      }
      const remember = remembers ? rememberPlan(spec.name, values as RememberValues) : undefined;
      // With --remember, --scope is the rule's scope: the answer itself is sent once.
      const deliver = spec.prepare(remember === undefined ? values : { ...values, scope: undefined });
      return runAnswer(io, { command: spec.name, target, values, kinds: spec.kinds, what: spec.what, deliver, remember });
    },
  });
}

interface AnswerRun {
  command: string;
  target: SessionTarget;
  values: { interaction?: string | undefined; json?: boolean | undefined };
  kinds: ReadonlyArray<PendingSummary["kind"]>;
  what: string;
  deliver: Deliver;
  remember?: RememberPlan | undefined;
  deps?: SessionCommandDeps;
}

function describeResult(result: AnswerResult, interactionId: string): string {
  // The sentence every door gives (session/answer-text.ts), and the command-line's next step.
  const text = describeAnswer(result, { interactionId });
  return result.result === "not_found" ? `${text}; run \`agy-bridge watch\` to see the open ones` : text;
}

/** The `--json` result when no single interaction could be chosen: none of the kind, or several. */
function unchosenJson(matching: readonly PendingSummary[], pending: readonly PendingSummary[]): Record<string, unknown> {
  const listed = (list: readonly PendingSummary[]) =>
    list.map((p) => ({ interactionId: p.interactionId, kind: p.kind, stepIndex: p.stepIndex, summary: p.summary }));
  return matching.length === 0 ? { result: "none_pending", pending: listed(pending) } : { result: "several_pending", pending: listed(matching) };
}

/** When nothing of this command's kind waits but something else does: which command answers it. */
function otherKindHint(pending: readonly PendingSummary[], kinds: ReadonlyArray<PendingSummary["kind"]>): string {
  const hints = pending
    .filter((p) => !kinds.includes(p.kind))
    .map((p) => {
      const what = `${p.interactionId} (step ${p.stepIndex}: ${p.summary})`;
      if (p.kind === "question") return `a question waits, ${what}: answer it with \`agy-bridge answer --option ID\` or decline it with \`agy-bridge deny\``;
      if (p.kind === "permission") return `a permission waits, ${what}: allow it with \`agy-bridge approve\` or refuse it with \`agy-bridge deny\``;
      return `a gate only the agy TUI can answer waits, ${what}: answer it there`;
    });
  return hints.length === 0 ? "" : `; ${hints.join("; ")}`;
}

async function runAnswer(io: CliIo, run: AnswerRun): Promise<number> {
  let session: AgySessionApi | undefined;
  try {
    session = await attachFromArgs(io, run.target, { follow: false }, run.deps);
    let interactionId = run.values.interaction;
    // Read before answering: the audit record says what was asked.
    let pendingNow: PendingSummary[] | undefined;
    if (interactionId === undefined) {
      const pending = await session.pending();
      pendingNow = pending;
      const chosen = singlePending(pending, run.kinds, run.what);
      if (typeof chosen === "string") {
        const matching = pending.filter((p) => run.kinds.includes(p.kind));
        if (run.values.json === true) io.stdout.write(`${JSON.stringify(unchosenJson(matching, pending))}\n`);
        const elsewhere = matching.length === 0 ? otherKindHint(pending, run.kinds) : "";
        io.stderr.write(`agy-bridge ${run.command}: ${terminalText(chosen + elsewhere)}\n`);
        return 1;
      }
      interactionId = chosen.interactionId;
    }
    pendingNow ??= await session.pending().catch(() => []);
    const pending = pendingNow.find((p) => p.interactionId === interactionId);
    const remembered = run.remember === undefined ? undefined : await proposeFor(session, pending, interactionId, run.remember);
    if (remembered !== undefined && run.remember?.dryRun === true) {
      const { proposal } = remembered;
      if (run.values.json === true) io.stdout.write(`${JSON.stringify({ interactionId, dryRun: true, rule: proposal })}\n`);
      else io.stdout.write(terminalText(await proposalText(remembered, run.remember.decision), { keepNewlines: true }));
      return 0;
    }
    // The one answer path: delivered as `cli`, and its record written where it is delivered (also when it throws).
    let answered: AnsweredRecord | undefined;
    let result: AnswerResult;
    try {
      result = await respond(session, interactionId, run.deliver.verdict, {
        decidedBy: "cli",
        ...(run.deliver.via === undefined ? {} : { via: run.deliver.via }),
        onAnswered: (record) => (answered = record),
      });
    } finally {
      if (answered !== undefined) await recordCliAnswer(io, { ...answered, command: run.command, pending });
    }
    // The rule is saved only for an answer that reached agy.
    const saved =
      remembered !== undefined && run.remember !== undefined && result.result === "delivered"
        ? await saveRemembered(io, remembered, run.remember, interactionId)
        : undefined;
    const rule = saved === undefined ? {} : { rule: { id: saved.id, decision: saved.decision, match: saved.match, scope: saved.scope } };
    if (run.values.json === true) io.stdout.write(`${JSON.stringify({ interactionId, ...result, ...rule })}\n`);
    const text = describeResult(result, interactionId);
    if (result.result === "delivered") {
      if (run.values.json !== true) io.stderr.write(`agy-bridge ${run.command}: ${terminalText(text)}\n`);
      if (run.values.json !== true && saved !== undefined) {
        io.stderr.write(
          `agy-bridge ${run.command}: ${terminalText(`saved rule ${saved.id}: ${saved.decision} ${saved.kind} ${JSON.stringify(saved.match)} (scope ${saved.scope}); \`agy-bridge policy rules revoke ${saved.id}\` removes it`)}\n`,
        );
      }
      return 0;
    }
    if (remembered !== undefined) io.stderr.write(`agy-bridge ${run.command}: the answer was not delivered, so no rule was saved\n`);
    io.stderr.write(`agy-bridge ${run.command}: ${terminalText(text)}\n`);
    return 1;
  } catch (error) {
    io.stderr.write(`${failureText(run.command, error)}\n`);
    return 1;
  } finally {
    await session?.close();
  }
}
