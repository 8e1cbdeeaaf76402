/**
 * What `approve`, `deny` and `answer` share: their common options and help
 * lines, the empty-value check, and the body: attach, pick the interaction
 * (given, or the single pending one of its kind), deliver, print the typed
 * result. Exit 0 only when the answer was delivered.
 */
import type { AgySessionApi, AnswerResult, PendingSummary } from "../session/index.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, UsageError, type ParseArgsOptionsConfig, type ParsedArgs } from "./args.js";
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

/** The options every answering command takes, besides its own. */
const ANSWER_OPTIONS = {
  ...CONNECTION_OPTIONS,
  ...PANE_OPTION,
  interaction: { type: "string" },
  json: { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

/** Shared options besides the connection and pane ones that may not be given an empty value. */
const NON_EMPTY = ["interaction"] as const;

/** The help that follows a command's own option lines. */
const HELP_TAIL = `  --json              print the result as one JSON line: {"interactionId","result","stepIndex"?}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Results: delivered (exit 0); already_resolved, timed_out, not_found (exit 1,
nothing sent). Exit 1 with one sentence on any other failure, 2 on a usage error.
`;

/** Delivers the answer to one interaction. */
export type Deliver = (session: AgySessionApi, interactionId: string) => Promise<AnswerResult>;

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
  return defineCommand({
    name: spec.name,
    summary: spec.summary,
    help: `${spec.help}${HELP_TAIL}`,
    options: { ...ANSWER_OPTIONS, ...spec.options },
    async run(io, { values }) {
      const target = sessionTarget(spec.name, values, io.env);
      const empty = emptyOption(values, [...NON_EMPTY, ...(spec.nonEmpty ?? [])]);
      if (empty !== undefined) throw new UsageError(`--${empty} needs a non-empty value; run \`agy-bridge ${spec.name} --help\``);
      const deliver = spec.prepare(values);
      return runAnswer(io, { command: spec.name, target, values, kinds: spec.kinds, what: spec.what, deliver });
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
  deps?: SessionCommandDeps;
}

function describeResult(result: AnswerResult, interactionId: string): string {
  switch (result.result) {
    case "delivered":
      return `delivered to step ${result.stepIndex} (${interactionId})`;
    case "already_resolved":
      return `interaction ${interactionId} was already resolved (step ${result.stepIndex}); nothing was sent`;
    case "timed_out":
      return `interaction ${interactionId} timed out in agy (step ${result.stepIndex}) and no retry is waiting; nothing was sent`;
    case "not_found":
      return `no interaction ${interactionId} in this conversation; run \`agy-bridge watch\` to see the open ones`;
  }
}

async function runAnswer(io: CliIo, run: AnswerRun): Promise<number> {
  let session: AgySessionApi | undefined;
  try {
    session = await attachFromArgs(io, run.target, { follow: false }, run.deps);
    let interactionId = run.values.interaction;
    if (interactionId === undefined) {
      const chosen = singlePending(await session.pending(), run.kinds, run.what);
      if (typeof chosen === "string") {
        io.stderr.write(`agy-bridge ${run.command}: ${chosen}\n`);
        return 1;
      }
      interactionId = chosen.interactionId;
    }
    const result = await run.deliver(session, interactionId);
    if (run.values.json === true) io.stdout.write(`${JSON.stringify({ interactionId, ...result })}\n`);
    const text = describeResult(result, interactionId);
    if (result.result === "delivered") {
      if (run.values.json !== true) io.stderr.write(`agy-bridge ${run.command}: ${text}\n`);
      return 0;
    }
    io.stderr.write(`agy-bridge ${run.command}: ${text}\n`);
    return 1;
  } catch (error) {
    io.stderr.write(`${failureText(run.command, error)}\n`);
    return 1;
  } finally {
    await session?.close();
  }
}
