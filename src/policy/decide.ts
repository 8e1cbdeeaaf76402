/**
 * The decision: ordered rules, first match wins, the policy's default when
 * none matches (docs/policy.md). An `approve` rule matches a command line
 * only when every simple command in it matches one of its patterns; a
 * `deny` or `ask` rule matches when any does. A line a rule must never
 * approve (substitutions, `eval`, a written file, …) skips every approve
 * rule and, unless a deny or ask rule matches, is asked — whatever the
 * default. A line the parser cannot read decides nothing: it is asked.
 * A file request is matched on its path resolved through symlinks (the
 * caller's `resolvePath`); an approve rule never matches a path that was not
 * resolved.
 */
import { commandPatternMatches, normalisePath, pathGlobMatches, writtenPath, withinHours, type PathPlaces } from "./matchers.js";
import type { PolicyContext, PolicyRequest } from "./policy-request.js";
import type { PolicyWithLearned } from "./learned-rules.js";
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

/**
 * The team policy's decision, then its learned rules' (docs/policy.md,
 * "Precedence"): a deny of the team policy (a rule's or its default) stands;
 * otherwise a matching learned rule decides — its denies before its
 * approves — through the same matching, so every protection above holds
 * for it too.
 */
export function decide(policy: PolicyWithLearned, request: PolicyRequest, context: PolicyContext = {}): PolicyDecision {
  const prepared = prepare(request, context);
  if ("decision" in prepared) return prepared;
  const team = decideTeam(policy, request, context, prepared);
  const learned = policy.learned?.rules() ?? [];
  if (learned.length === 0 || team.decision === "deny") return team;
  const trace = [...team.trace];
  const ordered = [...learned.filter((rule) => rule.action === "deny"), ...learned.filter((rule) => rule.action !== "deny")];
  for (const rule of ordered) {
    const outcome = ruleOutcome(rule, request, context, prepared.parsed, prepared.path);
    trace.push({ rule: rule.id, matched: outcome.matched, why: outcome.why });
    if (outcome.matched) return finish(rule, `Learned rule ${rule.id} ${outcome.why}.`, trace);
  }
  return { ...team, trace };
}

interface Prepared {
  parsed: Extract<CommandAnalysis, { status: "parsed" }> | undefined;
  path: FilePaths | undefined;
}

function prepare(request: PolicyRequest, context: PolicyContext): PolicyDecision | Prepared {
  const trace: RuleTrace[] = [];
  let analysis: CommandAnalysis | undefined;
  if (request.kind === "command") {
    analysis = analyseCommandLine(request.commandLine);
    if (analysis.status === "unparseable") {
      return {
        decision: "ask",
        rule: null,
        reason: `The command line cannot be split safely (${analysis.reason}), so no rule decides it and a person is asked.`,
        trace,
      };
    }
    if (analysis.status === "empty") {
      return { decision: "ask", rule: null, reason: "The command line is empty or only a comment, so no rule decides it.", trace };
    }
  }
  const parsed = analysis?.status === "parsed" ? analysis : undefined;
  const path = request.kind === "file" ? filePaths(request.path, context) : undefined;
  return { parsed, path };
}

function decideTeam(policy: Policy, request: PolicyRequest, context: PolicyContext, { parsed, path }: Prepared): PolicyDecision {
  const trace: RuleTrace[] = [];
  for (const rule of policy.rules) {
    const outcome = ruleOutcome(rule, request, context, parsed, path);
    trace.push({ rule: rule.id, matched: outcome.matched, why: outcome.why });
    if (!outcome.matched) continue;
    return finish(rule, `Rule ${rule.id} ${outcome.why}.`, trace);
  }

  if (parsed !== undefined && parsed.unsafe.length > 0) {
    return { decision: "ask", rule: null, reason: `No deny or ask rule matched and no rule may approve it, because ${parsed.unsafe[0]}.`, trace };
  }
  if (path !== undefined && path.resolved === undefined && policy.default !== "deny") {
    return { decision: "ask", rule: null, reason: `No rule matched, and ${path.unresolved}, so a person is asked (it is never approved).`, trace };
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
  path: FilePaths | undefined,
): Outcome {
  if (rule.kind !== "any" && rule.kind !== request.kind) return { matched: false, why: `covers ${rule.kind} requests, not ${request.kind}` };
  const limit = contextLimit(rule, context);
  if (limit !== undefined) return { matched: false, why: limit };
  switch (request.kind) {
    case "command":
      return commandOutcome(rule, parsed);
    case "file":
      return fileOutcome(rule, request.operation, path ?? filePaths("/", context));
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

/**
 * A file request's path twice: as written (normalised lexically, with the
 * places as given) and as the kernel would open it (symlinks of every
 * existing prefix resolved by the injected `resolvePath`, with the places
 * resolved too). An approve rule looks only at the resolved one and never
 * matches without it; a deny or ask rule matches either.
 */
interface FilePaths {
  written: string;
  writtenPlaces: PathPlaces;
  resolved: string | undefined;
  resolvedPlaces: PathPlaces;
  /** Why there is no resolved path, as a clause. */
  unresolved: string;
}

function filePaths(requestPath: string, context: PolicyContext): FilePaths {
  const raw = writtenPath(requestPath, context.workspace);
  const written = normalisePath(raw);
  const writtenPlaces: PathPlaces = { workspace: context.workspace, home: context.home };
  const given = context.resolvePath;
  // A resolver that throws resolves nothing: the path is asked, never approved.
  const resolve =
    given === undefined
      ? undefined
      : (place: string): string | undefined => {
          try {
            return given(place);
          } catch {
            return undefined;
          }
        };
  if (resolve === undefined) {
    return { written, writtenPlaces, resolved: undefined, resolvedPlaces: {}, unresolved: `its path ${written} was not resolved through symlinks` };
  }
  const real = (place: string | undefined) => (place === undefined ? undefined : resolve(place));
  const resolved = resolve(raw);
  return {
    written,
    writtenPlaces,
    resolved,
    resolvedPlaces: { workspace: real(context.workspace), home: real(context.home) },
    unresolved: `its path ${written} cannot be resolved through symlinks (a loop, a dangling link, no permission, or too long)`,
  };
}

function fileOutcome(rule: PolicyRule, operation: string | undefined, path: FilePaths): Outcome {
  if (rule.commands !== undefined) return { matched: false, why: "names commands, and a file request has none" };
  const operations = rule.operations ?? ["any"];
  if (!operations.includes("any") && (operation === undefined || !operations.includes(operation as never))) {
    return { matched: false, why: operation === undefined ? "names operations, and this request's operation is unknown" : `does not cover ${operation}` };
  }
  const shown = path.resolved === undefined || path.resolved === path.written ? path.written : `${path.written} (really ${path.resolved})`;
  if (rule.action === "approve") {
    if (path.resolved === undefined) return { matched: false, why: `may not approve it, because ${path.unresolved}` };
    const real = path.resolved;
    if (rule.paths !== undefined && !rule.paths.some((glob) => pathGlobMatches(glob, real, path.resolvedPlaces))) {
      return { matched: false, why: `does not cover ${shown}` };
    }
    return { matched: true, why: `${verb(rule.action)} ${operation ?? "access to"} ${shown}` };
  }
  if (rule.paths !== undefined) {
    const candidates = path.resolved === undefined ? [path.written] : [path.written, path.resolved];
    const places = path.resolved === undefined ? [path.writtenPlaces] : [path.writtenPlaces, path.resolvedPlaces];
    const hit = rule.paths.some((glob) => candidates.some((candidate) => places.some((where) => pathGlobMatches(glob, candidate, where))));
    if (!hit) return { matched: false, why: `does not cover ${shown}` };
  }
  return { matched: true, why: `${verb(rule.action)} ${operation ?? "access to"} ${shown}` };
}

function verb(action: PolicyAction): string {
  return action === "approve" ? "approves" : action === "deny" ? "denies" : "asks a person about";
}
