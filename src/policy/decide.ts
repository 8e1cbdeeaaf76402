/**
 * The decision: ordered rules, first match wins, the policy's default when
 * none matches (docs/policy.md). An `approve` rule matches a command line
 * only when every simple command in it matches one of its patterns; a
 * `deny` or `ask` rule matches when any does. A line a rule must never
 * approve (substitutions, `eval`, a written file, …) skips every approve
 * rule and, unless a deny or ask rule matches, is asked — whatever the
 * default. A line the parser cannot read decides nothing: it is asked.
 */
import { absolutePath, commandPatternMatches, pathGlobMatches, withinHours } from "./matchers.js";
import type { PolicyContext, PolicyRequest } from "./policy-request.js";
import type { Policy, PolicyAction, PolicyRule } from "./policy-schema.js";
import { analyseCommandLine, type CommandAnalysis, type SimpleCommand } from "./shell-command.js";

export interface RuleTrace {
  rule: string;
  matched: boolean;
  /** Why the rule did or did not decide, one clause. */
  why: string;
}

export interface PolicyDecision {
  decision: PolicyAction;
  /** The deciding rule's id; null when the default or a safety rule decided. */
  rule: string | null;
  /** One sentence a person can read. */
  reason: string;
  /** For a deny: what agy is told. */
  instruction?: string;
  /** For an approve: the scope the rule asked for. */
  scope?: "once" | "conversation";
  /** Every rule consulted, in order, with why it did or did not decide. */
  trace: RuleTrace[];
}

export function decide(policy: Policy, request: PolicyRequest, context: PolicyContext = {}): PolicyDecision {
  const trace: RuleTrace[] = [];
  let analysis: CommandAnalysis | undefined;
  if (request.kind === "command") {
    analysis = analyseCommandLine(request.commandLine);
    if (analysis.status === "unparseable") {
      return { decision: "ask", rule: null, reason: `The command line cannot be split safely (${analysis.reason}), so no rule decides it and a person is asked.`, trace };
    }
    if (analysis.status === "empty") {
      return { decision: "ask", rule: null, reason: "The command line is empty or only a comment, so no rule decides it.", trace };
    }
  }
  const parsed = analysis?.status === "parsed" ? analysis : undefined;
  const path = request.kind === "file" ? absolutePath(request.path, context.workspace) : undefined;

  for (const rule of policy.rules) {
    const outcome = ruleOutcome(rule, request, context, parsed, path);
    trace.push({ rule: rule.id, matched: outcome.matched, why: outcome.why });
    if (!outcome.matched) continue;
    return finish(rule, `Rule ${rule.id} ${outcome.why}.`, trace);
  }

  if (parsed !== undefined && parsed.unsafe.length > 0) {
    return { decision: "ask", rule: null, reason: `No deny or ask rule matched and no rule may approve it, because ${parsed.unsafe[0]}.`, trace };
  }
  if (request.kind === "question" && policy.default === "approve") {
    return { decision: "ask", rule: null, reason: "No rule matched, and a question is never approved by default: a person picks the answer.", trace };
  }
  return { decision: policy.default, rule: null, reason: `No rule matched, so the policy's default (${policy.default}) applies.`, trace };
}

function finish(rule: PolicyRule, reason: string, trace: RuleTrace[]): PolicyDecision {
  const out: PolicyDecision = { decision: rule.action, rule: rule.id, reason, trace };
  if (rule.action === "deny" && rule.instruction !== undefined) out.instruction = rule.instruction;
  if (rule.action === "approve" && rule.scope !== undefined) out.scope = rule.scope;
  return out;
}

interface Outcome {
  matched: boolean;
  why: string;
}

function ruleOutcome(
  rule: PolicyRule,
  request: PolicyRequest,
  context: PolicyContext,
  parsed: Extract<CommandAnalysis, { status: "parsed" }> | undefined,
  path: string | undefined,
): Outcome {
  if (rule.kind !== "any" && rule.kind !== request.kind) return { matched: false, why: `covers ${rule.kind} requests, not ${request.kind}` };
  const limit = contextLimit(rule, context);
  if (limit !== undefined) return { matched: false, why: limit };
  switch (request.kind) {
    case "command":
      return commandOutcome(rule, parsed);
    case "file":
      return fileOutcome(rule, request.operation, path ?? "/", context);
    default:
      if (rule.commands !== undefined || rule.paths !== undefined || rule.operations !== undefined) {
        return { matched: false, why: `names commands or paths, and a ${request.kind} request has neither` };
      }
      return { matched: true, why: `${verb(rule.action)} every ${request.kind} request it covers` };
  }
}

function contextLimit(rule: PolicyRule, context: PolicyContext): string | undefined {
  if (rule.conversations !== undefined && (context.conversationId === undefined || !rule.conversations.includes(context.conversationId))) {
    return "is limited to other conversations";
  }
  if (rule.panes !== undefined && (context.pane === undefined || !rule.panes.includes(context.pane))) {
    return "is limited to other panes";
  }
  if (rule.workspaces !== undefined) {
    const workspace = context.workspace;
    if (workspace === undefined || !rule.workspaces.some((glob) => pathGlobMatches(glob, workspace, context))) {
      return "is limited to other workspaces";
    }
  }
  if (rule.hours !== undefined && (context.minuteOfDay === undefined || !withinHours(rule.hours, context.minuteOfDay))) {
    return `applies only between ${rule.hours}`;
  }
  return undefined;
}

function commandOutcome(rule: PolicyRule, parsed: Extract<CommandAnalysis, { status: "parsed" }> | undefined): Outcome {
  if (parsed === undefined) return { matched: false, why: "has nothing to match" };
  if (rule.paths !== undefined || rule.operations !== undefined) return { matched: false, why: "names paths, and a command has none" };
  const matches = (command: SimpleCommand): boolean => {
    if (rule.commands === undefined) return true;
    // A command name with whitespace in it (`'git status'` as one word) is no command a pattern means.
    if (command.name !== undefined && /\s/u.test(command.name)) return false;
    return rule.commands.some((pattern) => commandPatternMatches(pattern, command.text));
  };
  if (rule.action === "approve") {
    if (parsed.unsafe.length > 0) return { matched: false, why: `may not approve it, because ${parsed.unsafe[0]}` };
    // A line of tests or arithmetic alone (`[[ -f x ]]`) runs no command a pattern could allow.
    if (parsed.commands.length === 0) return { matched: false, why: "has no command in the line to approve" };
    const outsider = parsed.commands.find((command) => !matches(command));
    if (outsider !== undefined) return { matched: false, why: `does not cover ${JSON.stringify(outsider.text)}` };
    return { matched: true, why: parsed.commands.length === 1 ? "approves this command" : `approves all ${parsed.commands.length} commands in the line` };
  }
  const hit = parsed.commands.find(matches);
  if (hit === undefined) return { matched: false, why: "matches none of the commands in the line" };
  return { matched: true, why: `${verb(rule.action)} ${JSON.stringify(hit.text)}` };
}

function fileOutcome(rule: PolicyRule, operation: string | undefined, path: string, context: PolicyContext): Outcome {
  if (rule.commands !== undefined) return { matched: false, why: "names commands, and a file request has none" };
  const operations = rule.operations ?? ["any"];
  if (!operations.includes("any") && (operation === undefined || !operations.includes(operation as never))) {
    return { matched: false, why: operation === undefined ? "names operations, and this request's operation is unknown" : `does not cover ${operation}` };
  }
  if (rule.paths !== undefined && !rule.paths.some((glob) => pathGlobMatches(glob, path, context))) {
    return { matched: false, why: `does not cover ${path}` };
  }
  return { matched: true, why: `${verb(rule.action)} ${operation ?? "access to"} ${path}` };
}

function verb(action: PolicyAction): string {
  return action === "approve" ? "approves" : action === "deny" ? "denies" : "asks a person about";
}
