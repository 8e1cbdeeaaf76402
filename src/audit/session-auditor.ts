/**
 * Turns what a supervising process sees into audit records: the policy's
 * decisions with their delivery, answers given through this process (CLI,
 * HTTP, the page), and answers given elsewhere — a request seen open here
 * that settled without this process answering it. Such an answer is
 * `observed`, never `tui`: agy's step records the answer, not who gave it
 * (spike-notes §12), so a person's keys in agy's dialog and another
 * client's RPC answer look the same from here.
 */
import type { EventOf, MapperEvent } from "../mapper/index.js";
import type { PolicyDecision } from "../policy/index.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";
import type { AuditEntry, AuditLog } from "./audit-log.js";
import type { AuditDecision } from "./audit-record.js";

type Requested = EventOf<"interaction_requested">;

/** A policy decision as the session's policy runner reports it. */
export interface PolicyDecisionReport {
  request: Requested;
  decision: PolicyDecision;
  decidedBy: string;
  result?: { result: string };
  error?: string;
}

export interface ManualAnswer {
  /** What was asked; default the request this auditor saw for `interactionId`. */
  request?: Requested | undefined;
  conversationId: string;
  interactionId: string;
  decision: Exclude<AuditDecision, "ask">;
  /**
   * Who in this process decided: `cli`, `http:<token name>`, `page:<device>`,
   * `mcp:<client>`, `acp:<client>`, `relay:<principal>`; `tui` only when
   * agy-bridge itself pressed the keys in agy's dialog or saw them pressed.
   */
  decidedBy: string;
  /** The answer path's result, e.g. `delivered`. */
  delivery: string;
  instruction?: string;
}

export interface SessionAuditor {
  /** Every event the process reads (requests are remembered, resolutions from elsewhere recorded). */
  observe(event: MapperEvent): void;
  policy(report: PolicyDecisionReport): void;
  answered(answer: ManualAnswer): void;
  /** Settles when every record so far is on disk; rejects with the first write failure. */
  flush(): Promise<void>;
}

export interface SessionAuditorOptions {
  agyPid?: number;
  /**
   * How long to wait before recording an answer from elsewhere (`observed`), so
   * that another agy-bridge process that gave it (the CLI, another serve)
   * has written its own record; default 2,000 ms.
   */
  elsewhereDelayMs?: number;
  /** Told about a record that could not be written (the decision itself stands). */
  onError?: (error: unknown) => void;
}

const MAX_REMEMBERED = 1_000;

/** `decidedBy` and `delivery` of an answer this process saw given elsewhere, by someone it cannot name. */
const OBSERVED = "observed";

const OUTCOME_DECISION: Readonly<Record<string, Exclude<AuditDecision, "ask"> | undefined>> = {
  approved: "approve",
  denied: "deny",
  answered: "answer",
};

export function createSessionAuditor(log: AuditLog, options: SessionAuditorOptions = {}): SessionAuditor {
  // The requests, kept past their resolution (an HTTP answer's result can arrive after it): the ledger's fold, bounded.
  const ledger = createInteractionLedger({ retain: MAX_REMEMBERED });
  const requestOfId = (interactionId: string) => ledger.get(interactionId)?.request;
  let pending: Promise<void> = Promise.resolve();
  let failure: unknown;
  const write = (entry: AuditEntry) => {
    const next = log.append(entry).catch((error: unknown) => {
      failure ??= error;
      options.onError?.(error);
    });
    pending = pending.then(() => next);
  };
  const base = (request: Requested | undefined, conversationId: string, interactionId: string) => ({
    ...(options.agyPid === undefined ? {} : { agyPid: options.agyPid }),
    conversationId,
    ...(request === undefined ? {} : { trajectoryId: request.trajectoryId, stepIndex: request.stepIndex }),
    interactionId,
    kind: request?.request.kind ?? "permission",
    request: request === undefined ? {} : auditRequestOf(request),
  });

  return {
    observe(event) {
      if (event.type === "interaction_requested") {
        ledger.apply(event);
        return;
      }
      if (event.type !== "interaction_resolved") return;
      // Only requests seen open here: a resolution replayed from history was recorded when it happened.
      const seenOpen = ledger.get(event.interactionId)?.state === "open";
      ledger.apply(event);
      const request = requestOfId(event.interactionId);
      if (!seenOpen || request === undefined || event.decidedBy !== undefined) return;
      const decision = OUTCOME_DECISION[event.outcome];
      if (decision === undefined) return;
      // Answered outside this process (agy's TUI, another client over RPC), unless another agy-bridge process logged it.
      const record = { ...base(request, event.conversationId, event.interactionId), decision, decidedBy: OBSERVED, delivery: OBSERVED };
      const check = new Promise<void>((resolve) => setTimeout(resolve, options.elsewhereDelayMs ?? 2_000))
        .then(() => log.answered(event.interactionId))
        .then((logged) => {
          if (!logged) write(record);
        })
        .catch(() => write(record));
      pending = pending.then(() => check);
    },
    policy(report) {
      const { request, decision } = report;
      write({
        ...base(request, request.conversationId, request.interactionId),
        decision: decision.decision,
        decidedBy: report.decidedBy,
        delivery: report.error !== undefined ? "failed" : (report.result?.result ?? "pending"),
        reason: report.error ?? decision.reason,
        ...(decision.instruction === undefined ? {} : { instruction: decision.instruction }),
      });
    },
    answered(answer) {
      write({
        ...base(answer.request ?? requestOfId(answer.interactionId), answer.conversationId, answer.interactionId),
        decision: answer.decision,
        decidedBy: answer.decidedBy,
        delivery: answer.delivery,
        ...(answer.instruction === undefined ? {} : { instruction: answer.instruction }),
      });
    },
    async flush() {
      await pending;
      if (failure !== undefined) throw failure;
    },
  };
}

/** The audit record's `request` of an interaction: its command line, path, question or variant. */
export function auditRequestOf(event: Requested): AuditEntry["request"] {
  const request = event.request;
  switch (request.kind) {
    case "permission":
      return request.variant === "filePermission" || request.action === "file" ? { path: request.target } : { commandLine: request.target };
    case "question":
      return { question: request.questions[0]?.question ?? "" };
    case "other":
      return { variant: request.variant };
  }
}
