/**
 * The one answer a person or a policy gives an interaction, with one set of
 * limits for every front door. Doors parse their wire shape into a `Verdict`
 * with `parseVerdict`; `instructionAllowed` is the single rule for where an
 * instruction for the model may travel (docs/events.md, "Instructions").
 */
import { z } from "zod";

/** The longest instruction or write-in any door accepts (the HTTP contract's limit). */
export const MAX_VERDICT_TEXT = 65_536;

const text = z.string().max(MAX_VERDICT_TEXT);

export const VerdictSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("approve"), scope: z.string().min(1).max(200).optional(), instruction: text.optional() }),
  z.object({ action: z.literal("deny"), instruction: text.optional() }),
  z.object({
    action: z.literal("answer"),
    optionIds: z.array(z.string().min(1).max(64)).max(64),
    writeIn: text.optional(),
  }),
]);

export type Verdict = z.infer<typeof VerdictSchema>;
export type VerdictAction = Verdict["action"];

export type ParsedVerdict = { ok: true; verdict: Verdict } | { ok: false; reason: string };

/** Parses a door's decoded body into a `Verdict`; on failure says what to change. */
export function parseVerdict(input: unknown): ParsedVerdict {
  const parsed = VerdictSchema.safeParse(input);
  if (parsed.success) return { ok: true, verdict: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "the answer" : `"${issue.path.join(".")}"`;
  return {
    ok: false,
    reason: `Fix ${where}: ${issue?.message ?? "it is not an answer"} (an answer is approve, deny or answer; texts up to ${MAX_VERDICT_TEXT} characters).`,
  };
}

/**
 * Whether agy's answer for this kind of interaction can carry an instruction:
 * only a permission's deny has a field for it (`userDenyInstruction`, newer
 * builds); agy's approve and question answers have none, so an instruction
 * there would be dropped silently — doors refuse it instead.
 */
export function instructionAllowed(kind: "permission" | "question" | "other", action: VerdictAction): boolean {
  return kind === "permission" && action === "deny";
}
