/**
 * A table of expected decisions (`agy-bridge policy test POLICY CASES.yaml`),
 * so a team keeps its policy under test in its own CI:
 *
 *   workspace: /home/me/project      # optional, for every case
 *   cases:
 *     - command: git status
 *       expect: approve
 *       rule: read-only              # optional: the rule that must decide
 *     - file: src/main.ts
 *       operation: edit
 *       expect: approve
 *     - kind: question
 *       expect: ask
 */
import { z } from "zod";
import { decide, type PolicyDecision } from "./decide.js";
import { parseYamlWith } from "./parse-policy.js";
import type { PolicyContext, PolicyRequest } from "./policy-request.js";
import { ActionSchema, type Policy } from "./policy-schema.js";

const CaseSchema = z
  .strictObject(
    {
      name: z.string().optional(),
      command: z.string().optional(),
      file: z.string().optional(),
      operation: z.enum(["create", "edit", "read"], { error: () => "must be create, edit or read" }).optional(),
      kind: z.enum(["question", "other"], { error: () => "must be question or other (commands and files are named with command: or file:)" }).optional(),
      workspace: z.string().optional(),
      conversation: z.string().optional(),
      pane: z.string().optional(),
      expect: ActionSchema,
      rule: z.string().nullable().optional(),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `unknown key ${issue.keys.join(", ")}; a case has command, file, operation, kind, workspace, conversation, pane, expect, rule, name`
          : "each case must be a mapping",
    },
  )
  .superRefine((value, ctx) => {
    const given = [value.command, value.file, value.kind].filter((x) => x !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: "custom", message: "a case names exactly one of command:, file: or kind:" });
  });
export type PolicyCase = z.infer<typeof CaseSchema>;

const CasesSchema = z.strictObject(
  { workspace: z.string().optional(), home: z.string().optional(), cases: z.array(CaseSchema, { error: () => "must be a list of cases" }) },
  { error: () => "a cases file is a mapping with cases: (and optionally workspace:, home:)" },
);

export interface CasesFile {
  workspace?: string | undefined;
  home?: string | undefined;
  cases: PolicyCase[];
}

export function parsePolicyCases(text: string, file: string): CasesFile {
  return parseYamlWith(CasesSchema, text, file);
}

export interface CaseResult {
  case: PolicyCase;
  index: number;
  decision: PolicyDecision;
  passed: boolean;
}

/**
 * Runs the cases. `resolvePath` resolves symlinks of file paths (a policy
 * approves no file request without it: docs/policy.md, "Files"); the CLI
 * passes the file system's.
 */
export function runPolicyCases(policy: Policy, cases: CasesFile, options: { resolvePath?: (path: string) => string | undefined } = {}): CaseResult[] {
  return cases.cases.map((entry, index) => {
    const request: PolicyRequest =
      entry.command !== undefined
        ? { kind: "command", commandLine: entry.command }
        : entry.file !== undefined
          ? { kind: "file", path: entry.file, operation: entry.operation }
          : ({ kind: entry.kind ?? "other", variant: "" } as PolicyRequest);
    const context: PolicyContext = {};
    const workspace = entry.workspace ?? cases.workspace;
    if (workspace !== undefined) context.workspace = workspace;
    if (cases.home !== undefined) context.home = cases.home;
    if (entry.conversation !== undefined) context.conversationId = entry.conversation;
    if (entry.pane !== undefined) context.pane = entry.pane;
    if (options.resolvePath !== undefined) context.resolvePath = options.resolvePath;
    const decision = decide(policy, request, context);
    const ruleOk = entry.rule === undefined || entry.rule === decision.rule;
    return { case: entry, index, decision, passed: decision.decision === entry.expect && ruleOk };
  });
}
