/**
 * A command entry of `agy:commands:<host>` read into a typed command, or one
 * sentence saying what is wrong with it. Pure: no Redis, no session. An
 * answer's body is the one `Verdict` of every door, with its limits.
 */
import { parseVerdict, type Verdict } from "../session/verdict.js";

export type CommandType = "approve" | "deny" | "answer" | "send_turn" | "interrupt";

const TYPES: readonly CommandType[] = ["approve", "deny", "answer", "send_turn", "interrupt"];

interface Base {
  requestId: string;
  conversationId: string;
  /** Who issued it (a bot's name, a person): carried into the audit log and `decidedBy`. */
  principal: string;
}

export type FleetCommand =
  | (Base & { type: "approve"; interactionId: string; scope?: string })
  | (Base & { type: "deny"; interactionId: string; instruction?: string })
  | (Base & { type: "answer"; interactionId: string; optionIds: string[]; writeIn?: string })
  | (Base & { type: "send_turn"; text: string })
  | (Base & { type: "interrupt" });

export type ParsedCommand = { ok: true; command: FleetCommand } | { ok: false; requestId: string; reason: string };

const MAX_ID = 200;
const MAX_TEXT = 100_000;

/** Redis returns fields as a flat `[name, value, …]` list; a repeated name keeps its first value. */
export function fieldMap(flat: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) if (!out.has(flat[i]!)) out.set(flat[i]!, flat[i + 1]!);
  return out;
}

export function parseCommand(fields: ReadonlyMap<string, string>): ParsedCommand {
  const requestId = fields.get("requestId") ?? "";
  const fail = (reason: string): ParsedCommand => ({ ok: false, requestId, reason });
  if (requestId === "" || requestId.length > MAX_ID)
    return fail(
      `the command has no usable requestId field: give each command a unique id of 1 to ${MAX_ID} characters, so its result can be found in the results stream`,
    );
  const type = fields.get("type") ?? "";
  if (!TYPES.includes(type as CommandType)) return fail(`the command type ${JSON.stringify(type.slice(0, 40))} is not one of ${TYPES.join(", ")}`);
  const conversationId = fields.get("conversationId") ?? "";
  if (conversationId === "" || conversationId.length > MAX_ID)
    return fail("the command names no conversationId: take it from agy:sessions or an agy:events:<host>:<conversationId> stream name");
  const principal = fields.get("principal") ?? "";
  if (principal === "" || principal.length > MAX_ID || /[\u0000-\u001f]/.test(principal))
    return fail("the command names no principal: say who issues it (e.g. approval-bot or a person's name), for the audit log");
  let body: Record<string, unknown> = {};
  const bodyText = fields.get("body");
  if (bodyText !== undefined && bodyText !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(bodyText);
    } catch {
      return fail('the command\'s body is not JSON: send a JSON object, e.g. {} or {"text":"…"}');
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return fail('the command\'s body must be a JSON object, e.g. {} or {"instruction":"…"}');
    body = parsed as Record<string, unknown>;
  }
  const base = { requestId, conversationId, principal };
  const t = type as CommandType;
  if (t === "send_turn") {
    if (typeof body["text"] !== "string" || body["text"].trim() === "") return fail('a send_turn command needs a body {"text":"…"} with the turn to type');
    if (body["text"].length > MAX_TEXT) return fail(`the turn is longer than ${MAX_TEXT} characters; send a shorter one`);
    return { ok: true, command: { ...base, type: t, text: body["text"] } };
  }
  if (t === "interrupt") return { ok: true, command: { ...base, type: t } };
  const interactionId = fields.get("interactionId") ?? "";
  if (interactionId === "" || interactionId.length > MAX_ID)
    return fail(`a ${t} command needs the interactionId of the interaction_requested event it answers`);
  const answer = answerOf(t, body);
  if (typeof answer === "string") return fail(answer);
  // The one Verdict and its limits, as every other door checks them (session/verdict.ts).
  const checked = parseVerdict(answer);
  if (!checked.ok) return fail(`the ${t} command's body does not fit: ${checked.reason}`);
  return { ok: true, command: { ...base, interactionId, ...commandOf(checked.verdict) } };
}

/** An answer command's body as a `Verdict` (unchecked for limits), or what is wrong with it. */
function answerOf(t: "approve" | "deny" | "answer", body: Record<string, unknown>): Verdict | string {
  if (t === "approve") {
    if (body["scope"] !== undefined && typeof body["scope"] !== "string") return "an approve body's scope must be a string like PERMISSION_SCOPE_CONVERSATION";
    return { action: "approve", ...(typeof body["scope"] === "string" ? { scope: body["scope"] } : {}) };
  }
  if (t === "deny") {
    if (body["instruction"] !== undefined && typeof body["instruction"] !== "string") return "a deny body's instruction must be a string";
    return { action: "deny", ...(typeof body["instruction"] === "string" ? { instruction: body["instruction"] } : {}) };
  }
  const options = body["options"];
  const writeIn = body["writeIn"];
  if (!Array.isArray(options) || !options.every((o) => typeof o === "string" && o !== ""))
    return 'an answer command needs a body {"options":["1",…]} with the chosen option ids (from the question\'s options)';
  if (writeIn !== undefined && typeof writeIn !== "string") return "an answer body's writeIn must be a string";
  if (options.length === 0 && (writeIn === undefined || writeIn === ""))
    return "an answer command chooses no option and writes nothing in: give options, writeIn or both";
  return { action: "answer", optionIds: options as string[], ...(typeof writeIn === "string" ? { writeIn } : {}) };
}

/** A checked `Verdict` as the command's own fields. */
function commandOf(
  verdict: Verdict,
): { type: "approve"; scope?: string } | { type: "deny"; instruction?: string } | { type: "answer"; optionIds: string[]; writeIn?: string } {
  switch (verdict.action) {
    case "approve":
      return { type: "approve", ...(verdict.scope === undefined ? {} : { scope: verdict.scope }) };
    case "deny":
      return { type: "deny", ...(verdict.instruction === undefined ? {} : { instruction: verdict.instruction }) };
    case "answer":
      return { type: "answer", optionIds: verdict.optionIds, ...(verdict.writeIn === undefined ? {} : { writeIn: verdict.writeIn }) };
  }
}
