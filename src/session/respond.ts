/**
 * The one answer path under every front door: a {@link Verdict} becomes the
 * session's approve, deny or answer, decided by `decidedBy`, and the answer's
 * audit record is written once, where the delivery happens — also when the
 * delivery throws. Doors parse their wire shape into a `Verdict`, refuse what
 * agy's answer cannot carry (`instructionAllowed`), call this, and put the
 * result into their own words (docs/architecture.md, "One supervisor under
 * every front door").
 */
import type { OpenRequest } from "./interaction-ledger.js";
import type { AgySession, AnswerResult, AnswerVia } from "./types.js";
import type { Verdict, VerdictAction } from "./verdict.js";

/** An answer's audit record, as the auditor's `answered` takes it. */
export interface AnsweredRecord {
  conversationId: string;
  interactionId: string;
  decision: VerdictAction;
  decidedBy: string;
  /** The delivery's `result`, or `failed` when it threw. */
  delivery: string;
  /** A deny's instruction for the model (the only answer that carries one). */
  instruction?: string;
  /** The request, when the door knows it (the record then names the step). */
  request?: OpenRequest;
}

export interface RespondOptions {
  /** Who decided (`cli`, `http:<principal>`, `mcp:<client>`, `relay:<principal>`…): on the resolution and the record. */
  decidedBy: string;
  /** How the answer travels (`rpc` or `tui`); the session's default when left out. */
  via?: AnswerVia;
  /** The request answered, when the door knows it. */
  request?: OpenRequest;
  /** Hears the record once the delivery is over (an auditor's `answered`). */
  onAnswered?: (record: AnsweredRecord) => void;
}

/** What `respond` needs of a session. */
export type Answerable = Pick<AgySession, "conversationId" | "approve" | "deny" | "answer">;

/** Delivers `verdict` to interaction `interactionId` and records it once; returns the session's result. */
export async function respond(session: Answerable, interactionId: string, verdict: Verdict, options: RespondOptions): Promise<AnswerResult> {
  const record = (delivery: string) =>
    options.onAnswered?.({
      conversationId: session.conversationId,
      interactionId,
      decision: verdict.action,
      decidedBy: options.decidedBy,
      delivery,
      ...(verdict.action === "deny" && verdict.instruction !== undefined ? { instruction: verdict.instruction } : {}),
      ...(options.request === undefined ? {} : { request: options.request }),
    });
  let result: AnswerResult;
  try {
    result = await deliver(session, interactionId, verdict, options);
  } catch (error) {
    record("failed");
    throw error;
  }
  record(result.result);
  return result;
}

function deliver(session: Answerable, interactionId: string, verdict: Verdict, options: RespondOptions): Promise<AnswerResult> {
  const common = { decidedBy: options.decidedBy, ...(options.via === undefined ? {} : { via: options.via }) };
  switch (verdict.action) {
    case "approve":
      return session.approve(interactionId, {
        ...common,
        ...(verdict.scope === undefined ? {} : { scope: verdict.scope }),
        ...(verdict.instruction === undefined ? {} : { instruction: verdict.instruction }),
      });
    case "deny":
      return session.deny(interactionId, { ...common, ...(verdict.instruction === undefined ? {} : { instruction: verdict.instruction }) });
    case "answer":
      return session.answer(interactionId, { ...common, optionIds: verdict.optionIds, ...(verdict.writeIn === undefined ? {} : { writeIn: verdict.writeIn }) });
  }
}
