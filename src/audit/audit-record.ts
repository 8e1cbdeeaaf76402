/**
 * One line of the audit log: a decision about one of agy's requests — by a
 * policy rule, a person at the CLI, a bot over HTTP, the approval page, an
 * agent, or someone elsewhere (`observed`) — and what became of it. Never
 * holds a token.
 */
import { z } from "zod";

/** `notify`: a notification about a request (a webhook delivery), with what became of it in `delivery`. */
export const AuditDecisionSchema = z.enum(["approve", "deny", "answer", "ask", "notify"]);
export type AuditDecision = z.infer<typeof AuditDecisionSchema>;

export const AuditRecordSchema = z.object({
  /** ISO 8601, to the millisecond. */
  time: z.string(),
  /** The machine's hostname. */
  host: z.string(),
  /** agy's process id, when known. */
  agyPid: z.number().int().optional(),
  conversationId: z.string(),
  trajectoryId: z.string().optional(),
  stepIndex: z.number().int().optional(),
  interactionId: z.string().optional(),
  /** `permission`, `question` or `other`. */
  kind: z.string(),
  /** What agy asked: the command line, the file path, the question, or the variant. */
  request: z.object({
    commandLine: z.string().optional(),
    path: z.string().optional(),
    question: z.string().optional(),
    variant: z.string().optional(),
  }),
  decision: AuditDecisionSchema,
  /**
   * `policy:<rule id>`, `policy:default`, `cli`, `http:<token name>`, `page`,
   * `page:<device>`, `mcp:<client>`, `acp:<client>`, `relay:<principal>`;
   * `tui` only when agy-bridge pressed the keys in agy's dialog or saw them
   * pressed; `observed` for an answer seen given elsewhere (agy's TUI or
   * another client over RPC: agy's step does not say which).
   */
  decidedBy: z.string(),
  /**
   * What became of it: the answer path's result (`delivered`, `already_resolved`,
   * `timed_out`, `not_found`, `failed`), `pending` for an `ask`, or `observed`
   * for an answer given elsewhere.
   */
  delivery: z.string(),
  /** The policy's sentence, or the deny instruction sent to agy. */
  reason: z.string().optional(),
  instruction: z.string().optional(),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;
