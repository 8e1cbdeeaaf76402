/**
 * The policy file's shape (docs/policy.md): the contract teams write files
 * against. Extend, never rename.
 */
import { z } from "zod";

export const ActionSchema = z.enum(["approve", "deny", "ask"], {
  error: () => "must be approve, deny or ask",
});
export type PolicyAction = z.infer<typeof ActionSchema>;

export const RuleKindSchema = z.enum(["command", "file", "question", "other", "any"], {
  error: () => "must be command, file, question, other or any",
});
export type RuleKind = z.infer<typeof RuleKindSchema>;

export const FileOperationSchema = z.enum(["create", "edit", "read", "any"], {
  error: () => "must be create, edit, read or any",
});
export type FileOperation = z.infer<typeof FileOperationSchema>;

const patternList = (what: string) =>
  z.array(z.string({ error: () => `each entry must be a quoted string (${what})` }).min(1, `an empty ${what} matches nothing; remove it`), {
    error: () => `must be a list of ${what}s, like ["…"]`,
  });

/**
 * Who added a learned rule, when, from which request, how often it fired
 * and when it last did. The policy parser accepts it on any rule and
 * decide() ignores it.
 */
export const LearnedInfoSchema = z.strictObject(
  {
    addedBy: z.string({ error: () => "must say who added the rule, like cli" }).min(1, "must say who added the rule, like cli"),
    addedAt: z.string({ error: () => "must be an ISO 8601 time, like 2026-01-31T12:00:00.000Z" }),
    fromRequest: z.string({ error: () => "must be the interaction id the rule was learned from" }),
    /** The conversation the request came from. */
    fromConversation: z.string().optional(),
    fired: z
      .number({ error: () => "must be a count, like 0" })
      .int()
      .nonnegative()
      .default(0),
    lastFired: z.string().nullable().default(null),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown key ${issue.keys.map((key) => JSON.stringify(key)).join(", ")} in learned; the keys are addedBy, addedAt, fromRequest, fromConversation, fired, lastFired`
        : "learned must be a mapping with addedBy, addedAt, fromRequest, fired and lastFired",
  },
);
export type LearnedInfo = z.infer<typeof LearnedInfoSchema>;

const HOURS = /^([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-3]):([0-5][0-9])$/;

export const RuleSchema = z
  .strictObject(
    {
      id: z
        .string({ error: () => "every rule needs an id, like id: read-only" })
        .regex(/^[a-z0-9-]+$/, "must be lower-case letters, digits and dashes, like read-only"),
      kind: RuleKindSchema.default("any"),
      /** Command patterns: `*` any run of characters, `?` one character, nothing else special. */
      commands: patternList("command pattern").optional(),
      /** File operations the rule covers (default any). */
      operations: z.array(FileOperationSchema, { error: () => "must be a list, like [create, edit]" }).optional(),
      /** picomatch globs; `{workspace}` and `{home}` stand for those directories. */
      paths: patternList("path glob").optional(),
      /** picomatch globs on agy's workspace root. */
      workspaces: patternList("workspace glob").optional(),
      /** Conversation ids the rule is limited to. */
      conversations: patternList("conversation id").optional(),
      /** tmux panes (`%3`) the rule is limited to. */
      panes: patternList("pane").optional(),
      /** Local time of day, `HH:MM-HH:MM` (may wrap past midnight). */
      hours: z.string().regex(HOURS, "must be a local time range like 09:00-18:00").optional(),
      action: ActionSchema,
      /** What agy is told when the rule denies. */
      instruction: z.string().optional(),
      /** agy's conversation-wide scope for an approval, where the request offers one. */
      scope: z.enum(["once", "conversation"], { error: () => "must be once or conversation" }).optional(),
      /** Bookkeeping of a rule learned from an answer (docs/policy.md, "Learned rules"); never consulted when deciding. */
      learned: LearnedInfoSchema.optional(),
    },
    { error: (issue) => (issue.code === "unrecognized_keys" ? unknownKeys(issue.keys, "a rule") : "each rule must be a mapping") },
  )
  .superRefine((rule, ctx) => {
    if (rule.kind === "question" && rule.action === "approve") {
      ctx.addIssue({ code: "custom", path: ["action"], message: "approve is not valid for kind question (a rule cannot pick an answer); write deny or ask" });
    }
    if (rule.commands !== undefined && rule.kind !== "command" && rule.kind !== "any") {
      ctx.addIssue({ code: "custom", path: ["commands"], message: `commands apply to kind command, not ${rule.kind}; remove them or write kind: command` });
    }
    for (const key of ["paths", "operations"] as const) {
      if (rule[key] !== undefined && rule.kind !== "file" && rule.kind !== "any") {
        ctx.addIssue({ code: "custom", path: [key], message: `${key} apply to kind file, not ${rule.kind}; remove them or write kind: file` });
      }
    }
    if (rule.instruction !== undefined && rule.action !== "deny") {
      ctx.addIssue({ code: "custom", path: ["instruction"], message: "an instruction goes with action deny; remove it or write action: deny" });
    }
    if (rule.scope !== undefined && rule.action !== "approve") {
      ctx.addIssue({ code: "custom", path: ["scope"], message: "a scope goes with action approve; remove it or write action: approve" });
    }
  });
export type PolicyRule = z.infer<typeof RuleSchema>;

export const PolicySchema = z
  .strictObject(
    {
      version: z.literal(1, { error: () => "must be 1 (write version: 1)" }),
      default: ActionSchema.default("ask"),
      rules: z.array(RuleSchema, { error: () => "must be a list of rules" }).default([]),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys" ? unknownKeys(issue.keys, "the policy") : "a policy file is a mapping with version, default and rules",
    },
  )
  .superRefine((policy, ctx) => {
    const seen = new Map<string, number>();
    policy.rules.forEach((rule, index) => {
      const first = seen.get(rule.id);
      if (first !== undefined) {
        ctx.addIssue({ code: "custom", path: ["rules", index, "id"], message: `id ${rule.id} is already used by rule ${first + 1}; ids must be unique` });
      } else seen.set(rule.id, index);
    });
  });
export type Policy = z.infer<typeof PolicySchema>;

function unknownKeys(keys: readonly string[] | undefined, where: string): string {
  const names = (keys ?? []).map((key) => JSON.stringify(key)).join(", ");
  const valid =
    where === "a rule"
      ? "id, kind, commands, operations, paths, workspaces, conversations, panes, hours, action, instruction, scope, learned"
      : "version, default, rules";
  return `unknown key${(keys?.length ?? 0) === 1 ? "" : "s"} ${names} in ${where}; the keys are ${valid}`;
}
