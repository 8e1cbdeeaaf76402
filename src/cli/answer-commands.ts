/**
 * The body shared by `approve`, `deny` and `answer`: attach, pick the
 * interaction (given, or the single pending one of its kind), deliver, print
 * the typed result. Exit 0 only when the answer was delivered.
 */
import type { AgySessionApi, AnswerResult, PendingSummary } from "../session/index.js";
import type { CliIo } from "./command.js";
import { attachFromArgs, failureText, singlePending, type SessionCommandDeps } from "./session-connect.js";

export interface AnswerRun {
  command: string;
  values: { url?: string | undefined; "csrf-token"?: string | undefined; conversation?: string | undefined; interaction?: string | undefined; json?: boolean | undefined; pane?: string | undefined };
  kinds: ReadonlyArray<PendingSummary["kind"]>;
  what: string;
  deliver(session: AgySessionApi, interactionId: string): Promise<AnswerResult>;
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

export async function runAnswer(io: CliIo, run: AnswerRun): Promise<number> {
  let session: AgySessionApi | undefined;
  try {
    session = await attachFromArgs(io, run.values, { follow: false }, run.deps);
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
