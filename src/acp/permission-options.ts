/**
 * A gate or a question as the options of an ACP `session/request_permission`,
 * and the editor's choice read back as what to do with the interaction.
 * A permission offers allow once / deny, and "allow for this conversation"
 * (agy's conversation scope) where the gate takes a scope. A question offers
 * its own options; a multi-select question is asked one pick at a time, each
 * request offering the options not picked yet and "done", until the editor
 * says done — so every choice the question allows can be made with the
 * plain permission request every client has.
 */
import type { PermissionOption, RequestPermissionOutcome } from "@agentclientprotocol/sdk";
import type { InteractionRequest } from "../mapper/index.js";

/** agy's permission scope for "allow for this conversation" (spike-notes §10.6). */
export const CONVERSATION_SCOPE = "PERMISSION_SCOPE_CONVERSATION";

/** What the editor chose. */
export type GateChoice =
  | { action: "approve"; scope?: string }
  | { action: "deny" }
  | { action: "pick"; optionId: string }
  | { action: "done" }
  | { action: "cancelled" };

const ALLOW = "allow";
const ALLOW_CONVERSATION = "allow_conversation";
const DENY = "deny";
const DONE = "done";
const DISMISS = "dismiss";
const PICK = "pick:";

/** Whether the gate can take agy's conversation scope: a `permission` or `filePermission` gate (a `runCommand` one takes none). */
export function offersConversationScope(request: InteractionRequest): boolean {
  return request.kind === "permission" && request.variant !== "runCommand";
}

/** The options of a permission gate (or a gate only the TUI knows: allow / deny is all agy-bridge can say to it). */
export function permissionOptions(request: InteractionRequest): PermissionOption[] {
  return [
    { optionId: ALLOW, name: "Allow once", kind: "allow_once" },
    ...(offersConversationScope(request) ? [{ optionId: ALLOW_CONVERSATION, name: "Allow for this conversation", kind: "allow_always" as const }] : []),
    { optionId: DENY, name: "Deny", kind: "reject_once" },
  ];
}

/** The options of one round of a question: the options still open, "done" once something is picked (multi-select), "dismiss". */
export function questionOptions(options: ReadonlyArray<{ id: string; text: string }>, picked: ReadonlySet<string>, multiSelect: boolean): PermissionOption[] {
  const open = options.filter((o) => !picked.has(o.id));
  return [
    ...open.map((o) => ({ optionId: `${PICK}${o.id}`, name: multiSelect ? `Select: ${o.text}` : o.text, kind: "allow_once" as const })),
    ...(multiSelect && picked.size > 0 ? [{ optionId: DONE, name: `Done (${picked.size} selected)`, kind: "allow_once" as const }] : []),
    { optionId: DISMISS, name: "Dismiss the question", kind: "reject_once" as const },
  ];
}

/** Reads the editor's outcome; an option id this request never offered counts as cancelled (never a guess). */
export function readChoice(outcome: RequestPermissionOutcome, offered: readonly PermissionOption[]): GateChoice {
  if (outcome.outcome !== "selected") return { action: "cancelled" };
  const id = outcome.optionId;
  if (!offered.some((o) => o.optionId === id)) return { action: "cancelled" };
  if (id === ALLOW) return { action: "approve" };
  if (id === ALLOW_CONVERSATION) return { action: "approve", scope: CONVERSATION_SCOPE };
  if (id === DENY || id === DISMISS) return { action: "deny" };
  if (id === DONE) return { action: "done" };
  if (id.startsWith(PICK)) return { action: "pick", optionId: id.slice(PICK.length) };
  return { action: "cancelled" };
}
