/**
 * The audit record of an answer given at the command line (`approve`,
 * `deny`, `answer`, `interrupt`): who (`cli`), what was asked, what became of
 * it. A log that cannot be written is said once on stderr; the answer stands.
 */
import type { AuditEntry } from "../audit/index.js";
import type { PendingSummary } from "../session/index.js";
import type { AnsweredRecord } from "../session/respond.js";
import type { CliIo } from "./command.js";
import { terminalText } from "./terminal-text.js";

/** The record `respond()` made of a command-line answer, with what was pending for it. */
export interface CliAnswer extends AnsweredRecord {
  command: string;
  /** What was pending for it before the answer, when it was. */
  pending: PendingSummary | undefined;
}

export async function recordCliAnswer(io: CliIo, answer: CliAnswer): Promise<void> {
  const p = answer.pending;
  const entry: AuditEntry = {
    conversationId: answer.conversationId,
    interactionId: answer.interactionId,
    kind: p?.kind ?? "permission",
    request: p === undefined ? {} : requestOf(p),
    decision: answer.decision,
    decidedBy: answer.decidedBy,
    delivery: answer.delivery,
    ...(p === undefined ? {} : { trajectoryId: p.trajectoryId, stepIndex: p.stepIndex }),
    ...(answer.instruction === undefined ? {} : { instruction: answer.instruction }),
  };
  try {
    // The audit writer loads when there is something to write, not for a command that failed before answering.
    const { auditLogFor } = await import("./policy-options.js");
    await auditLogFor(io, {}).append(entry);
  } catch (error) {
    io.stderr.write(`${terminalText(`agy-bridge ${answer.command}: ${error instanceof Error ? error.message : String(error)}`)}\n`);
  }
}

function requestOf(p: PendingSummary): AuditEntry["request"] {
  if (p.kind === "question") return { question: p.summary };
  if (p.kind === "other") return { variant: p.summary };
  return /FILE|VIEW|WRITE|EDIT/.test(p.stepType) ? { path: p.summary } : { commandLine: p.summary };
}
