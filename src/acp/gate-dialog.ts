/**
 * Asks the editor about one gate with `session/request_permission` and
 * delivers its choice through the session's answer path (re-read at
 * delivery, never to another kind of step), recording it in the audit log.
 * A question is asked with its own options; a multi-select one a pick at a
 * time until the editor says done — or, when the client offers form
 * elicitation, as one form with the question's options (a multi-select as a
 * list). Aborting `signal` (the person answered in the TUI first) withdraws
 * the request.
 */
import type { AgentContext, ElicitationPropertySchema, PermissionOption, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { SessionAuditor } from "../audit/index.js";
import type { EventOf } from "../mapper/index.js";
import type { AgySessionApi } from "../session/index.js";
import { respond, type AnsweredRecord } from "../session/respond.js";
import type { Verdict } from "../session/verdict.js";
import { permissionOptions, questionOptions, readChoice, type GateChoice } from "./permission-options.js";

type Requested = EventOf<"interaction_requested">;

export interface GateDialog {
  sessionId: string;
  client: AgentContext;
  agy: AgySessionApi;
  event: Requested;
  /** The title the editor was shown for the call. */
  title: string | undefined;
  decidedBy: string;
  auditor?: SessionAuditor | undefined;
  /** The client said it takes form elicitations (`clientCapabilities.elicitation.form`): questions are asked as forms. */
  forms?: boolean | undefined;
  signal: AbortSignal;
}

export async function askGate(dialog: GateDialog): Promise<void> {
  const request = dialog.event.request;
  if (request.kind === "question") return askQuestion(dialog);
  const options = permissionOptions(request);
  const choice = await ask(dialog, options, dialog.title ?? (request.kind === "permission" ? request.target : "agy asks in its TUI"));
  if (choice.action === "approve") {
    await answer(dialog, { action: "approve", ...(choice.scope === undefined ? {} : { scope: choice.scope }) });
  } else if (choice.action === "deny") {
    await answer(dialog, { action: "deny" });
  }
}

async function askQuestion(dialog: GateDialog): Promise<void> {
  const request = dialog.event.request;
  const question = request.kind === "question" ? request.questions[0] : undefined;
  if (question === undefined) return;
  if (dialog.forms === true) return askByForm(dialog, question);
  const picked = new Set<string>();
  for (;;) {
    const chosen = question.options.filter((o) => picked.has(o.id)).map((o) => o.text);
    const title = chosen.length === 0 ? question.question : `${question.question} (selected: ${chosen.join(", ")})`;
    const choice = await ask(dialog, questionOptions(question.options, picked, question.multiSelect), title);
    if (choice.action === "cancelled" || choice.action === "approve") return;
    if (choice.action === "deny") {
      await answer(dialog, { action: "deny" });
      return;
    }
    if (choice.action === "pick") picked.add(choice.optionId);
    const finished = choice.action === "done" || !question.multiSelect || picked.size === question.options.length;
    if (!finished) continue;
    // Option order, as agy's own dialog sends them.
    const optionIds = question.options.filter((o) => picked.has(o.id)).map((o) => o.id);
    await answer(dialog, { action: "answer", optionIds });
    return;
  }
}

type Question = { question: string; options: Array<{ id: string; text: string }>; multiSelect: boolean };

async function askByForm(dialog: GateDialog, question: Question): Promise<void> {
  const options = question.options.map((o) => ({ const: o.id, title: o.text }));
  const choice: ElicitationPropertySchema = question.multiSelect
    ? { type: "array", title: question.question, minItems: 1, items: { anyOf: options } }
    : { type: "string", title: question.question, oneOf: options };
  const response = await dialog.client.request(
    "elicitation/create",
    {
      mode: "form",
      sessionId: dialog.sessionId,
      toolCallId: dialog.event.callId,
      message: question.question,
      requestedSchema: { type: "object", properties: { choice }, required: ["choice"] },
      _meta: { agyBridge: { interactionId: dialog.event.interactionId, kind: "question" } },
    },
    { cancellationSignal: dialog.signal, stopWaitingOnCancel: true },
  );
  if (response.action === "decline") {
    await answer(dialog, { action: "deny" });
    return;
  }
  if (response.action !== "accept") return;
  const value = (response as { content?: Record<string, unknown> | null }).content?.["choice"];
  const given = typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  const known = new Set(question.options.map((o) => o.id));
  // Only ids the question offered, in its order; anything else answers nothing (never a guess).
  if (given.length === 0 || given.some((id) => !known.has(id)) || (!question.multiSelect && given.length !== 1)) return;
  const optionIds = question.options.filter((o) => given.includes(o.id)).map((o) => o.id);
  await answer(dialog, { action: "answer", optionIds });
}

async function ask(dialog: GateDialog, options: PermissionOption[], title: string): Promise<GateChoice> {
  const toolCall: ToolCallUpdate = { toolCallId: dialog.event.callId, title, status: "pending" };
  const response = await dialog.client.request(
    "session/request_permission",
    { sessionId: dialog.sessionId, toolCall, options, _meta: { agyBridge: { interactionId: dialog.event.interactionId, kind: dialog.event.request.kind } } },
    { cancellationSignal: dialog.signal, stopWaitingOnCancel: true },
  );
  return readChoice(response.outcome, options);
}

/** The editor's choice through the one answer path: delivered, and recorded once where it is delivered. */
async function answer(dialog: GateDialog, verdict: Verdict): Promise<void> {
  const auditor = dialog.auditor;
  await respond(dialog.agy, dialog.event.interactionId, verdict, {
    decidedBy: dialog.decidedBy,
    request: dialog.event,
    ...(auditor === undefined ? {} : { onAnswered: (record: AnsweredRecord) => auditor.answered(record) }),
  });
}
