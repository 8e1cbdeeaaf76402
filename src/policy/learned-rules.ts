/**
 * Rules learned from answers (docs/policy.md, "Learned rules"), pure: the
 * rules file's format (the policy format, each rule with a `learned:`
 * mapping of bookkeeping), the narrowest rule proposed for one request, a
 * person's edit of it checked against that request, and the listing. The
 * file itself is read and written by the callers (the CLI's store); the
 * rules are decided by decide(), after the team policy's (decide.ts).
 */
import { stringify } from "yaml";
import { AgyBridgeError } from "../errors.js";
import { commandPatternMatches, normalisePath, pathGlobMatches, writtenPath } from "./matchers.js";
import { parsePolicy, PolicyError } from "./parse-policy.js";
import type { PolicyRequest } from "./policy-request.js";
import type { LearnedInfo, Policy, PolicyRule } from "./policy-schema.js";
import { analyseCommandLine } from "./shell-command.js";

export type LearnedDecision = "approve" | "deny";
export type LearnedScope = "conversation" | "workspace" | "everywhere";
export const LEARNED_SCOPES: readonly LearnedScope[] = ["conversation", "workspace", "everywhere"];

/** Where learned rules come from when decide() runs: read again whenever the file changed. */
export interface LearnedSource {
  rules(): readonly PolicyRule[];
}

/** A team policy with the learned rules it includes (docs/policy.md, "Precedence"). */
export type PolicyWithLearned = Policy & { learned?: LearnedSource };

/** The rule proposed for a request, exactly as it would be saved. */
export interface RuleProposal {
  decision?: LearnedDecision;
  /** The rule text as the rules file writes it: a command pattern, or a path glob. */
  match: string;
  scope: LearnedScope;
  kind: "command" | "file";
  /** A file rule's operation, when the request names one. */
  operation?: "create" | "edit" | "read";
  /** Wider rules a person may pick instead (a command prefix, the file's directory), narrowest first. */
  alternatives: string[];
}

/** Where the request came from: the facts a scope limits the rule to. */
export interface RequestPlace {
  workspace?: string | undefined;
  conversationId?: string | undefined;
}

/** What saving a rule takes: the proposal as the person confirmed it, and where it came from. */
export interface SaveRule {
  decision: LearnedDecision;
  proposal: RuleProposal;
  place: RequestPlace;
  /** `cli`, `http:<token name>`, `page`, … */
  addedBy: string;
  fromRequest: string;
  /** What was asked, for the audit record. */
  request: { commandLine?: string; path?: string };
}

/** One learned rule as `policy rules` lists it. */
export interface LearnedRuleView {
  id: string;
  /** `ask` only for a rule edited by hand to ask. */
  decision: LearnedDecision | "ask";
  match: string;
  scope: LearnedScope;
  kind: "command" | "file";
  addedBy: string;
  addedAt: string;
  fromRequest: string;
  fired: number;
  lastFired: string | null;
}

function refuse(sentence: string): never {
  throw new AgyBridgeError("invalid_argument", sentence);
}

/** The scope used when none is chosen: the workspace when it is known, else the conversation. */
export function defaultScope(place: RequestPlace): LearnedScope {
  return place.workspace === undefined ? "conversation" : "workspace";
}

/**
 * The narrowest rule covering `request`: the exact command (one simple
 * command, as the shell parser reads it), or the file's path inside the
 * workspace. A request no rule can cover exactly is refused with a sentence.
 */
export function proposeRule(request: PolicyRequest, place: RequestPlace, choice: { decision?: LearnedDecision; scope?: LearnedScope } = {}): RuleProposal {
  const scope = choice.scope ?? defaultScope(place);
  checkScope(scope, place);
  const decision = choice.decision === undefined ? {} : { decision: choice.decision };
  if (request.kind === "command") return { ...decision, scope, kind: "command", ...commandProposal(request.commandLine, choice.decision) };
  if (request.kind === "file") {
    const { match, alternatives } = fileProposal(request.path, place.workspace);
    return { ...decision, scope, kind: "file", match, alternatives, ...(request.operation === undefined ? {} : { operation: request.operation }) };
  }
  return refuse(`A ${request.kind} request cannot be remembered: a learned rule covers a command or a file.`);
}

function checkScope(scope: LearnedScope, place: RequestPlace): void {
  if (!LEARNED_SCOPES.includes(scope)) refuse(`The scope ${JSON.stringify(scope)} is not one of conversation, workspace or everywhere.`);
  if (scope === "workspace" && place.workspace === undefined) {
    refuse("agy names no workspace for this conversation, so a workspace rule cannot be learned; choose the scope conversation or everywhere.");
  }
  if (scope === "conversation" && place.conversationId === undefined)
    refuse("The request's conversation is unknown, so a conversation rule cannot be learned.");
}

function commandProposal(line: string, decision: LearnedDecision | undefined): { match: string; alternatives: string[] } {
  const analysis = analyseCommandLine(line);
  if (analysis.status === "unparseable") refuse(`The command line cannot be split safely (${analysis.reason}), so no rule can be learned from it.`);
  if (analysis.status === "empty") refuse("The command line is empty, so no rule can be learned from it.");
  if (decision !== "deny" && analysis.unsafe.length > 0)
    refuse(`No rule may approve this command line, because ${analysis.unsafe[0]}; answer it without remembering.`);
  if (analysis.commands.length !== 1) {
    const texts = analysis.commands.map((command) => JSON.stringify(command.text)).join(", ");
    refuse(
      `The command line runs ${analysis.commands.length} commands (${texts}); a learned rule covers one command, so add rules for them to the policy file instead.`,
    );
  }
  const command = analysis.commands[0]!;
  if (command.name === undefined || /\s/u.test(command.name)) refuse(`${JSON.stringify(command.text)} names no command a rule can match.`);
  if (/[*?]/.test(command.text)) {
    refuse(
      `${JSON.stringify(command.text)} holds * or ?, which a command pattern reads as wildcards, so no rule matches exactly it; give the rule yourself (--rule).`,
    );
  }
  const alternatives: string[] = [];
  const words = command.words ?? [];
  const cut = words.findIndex((word) => word.startsWith("-"));
  const prefix = words.slice(0, cut === -1 ? words.length - 1 : cut);
  // A prefix of two words at least (`npm test *`, never `rm *`), of plain words only, shorter than the command.
  if (words[0] === command.name && prefix.length >= 2 && prefix.length < words.length && prefix.every((word) => !/[\s*?]/u.test(word))) {
    alternatives.push(`${prefix.join(" ")} *`);
  }
  return { match: command.text, alternatives };
}

/** `{workspace}/…` with glob characters of the path escaped, so the glob matches that path alone. */
function fileProposal(path: string, workspace: string | undefined): { match: string; alternatives: string[] } {
  if (workspace === undefined) refuse("agy names no workspace for this conversation, and a learned file rule covers files inside the workspace.");
  const absolute = normalisePath(writtenPath(path, workspace));
  const root = normalisePath(workspace).replace(/\/+$/, "");
  if (!absolute.startsWith(`${root}/`)) refuse(`${absolute} is outside the workspace ${root}, and a learned file rule covers files inside it.`);
  const relative = absolute.slice(root.length + 1).split("/");
  const match = `{workspace}/${relative.map(escapeGlob).join("/")}`;
  const alternatives = relative.length > 1 ? [`{workspace}/${relative.slice(0, -1).map(escapeGlob).join("/")}/**`] : [];
  return { match, alternatives };
}

function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]{}()!+@]/g, "\\$&");
}

/**
 * A person's edit of the proposal (`--rule TEXT`, the page's field),
 * checked: it must still cover the request they answered, and name its
 * command (no wildcard in the command name) or stay inside the workspace.
 */
export function editedRule(proposal: RuleProposal, match: string, request: PolicyRequest, place: RequestPlace): RuleProposal {
  const text = match.trim();
  if (text === "") refuse("The rule is empty; give the command or the path glob it should match.");
  if (proposal.kind === "command" && request.kind === "command") {
    const name = text.split(" ")[0] ?? "";
    if (/[*?]/.test(name)) refuse(`The rule ${JSON.stringify(text)} has a wildcard in its command name; a learned rule names its command, like "npm test *".`);
    const analysis = analyseCommandLine(request.commandLine);
    const command = analysis.status === "parsed" ? analysis.commands[0] : undefined;
    if (command === undefined || !commandPatternMatches(text, command.text)) {
      refuse(
        `The rule ${JSON.stringify(text)} does not cover the command ${JSON.stringify(command?.text ?? request.commandLine)}; give a pattern that matches it.`,
      );
    }
  } else if (proposal.kind === "file" && request.kind === "file") {
    if (!text.startsWith("{workspace}/"))
      refuse(`The rule ${JSON.stringify(text)} must start with {workspace}/: a learned file rule covers files inside the workspace.`);
    if (/(^|\/)\.\.(\/|$)/.test(text)) refuse(`The rule ${JSON.stringify(text)} may not climb out of the workspace with "..".`);
    const absolute = normalisePath(writtenPath(request.path, place.workspace));
    if (!pathGlobMatches(text, absolute, { workspace: place.workspace })) {
      refuse(`The rule ${JSON.stringify(text)} does not cover the file ${absolute}; give a glob that matches it.`);
    }
  }
  return { ...proposal, match: text };
}

export interface LearnedRuleInput {
  id: string;
  decision: LearnedDecision;
  proposal: RuleProposal;
  place: RequestPlace;
  addedBy: string;
  /** ISO 8601 (the caller reads the clock). */
  addedAt: string;
  fromRequest: string;
}

/** The rule as the rules file writes it: the policy format, limited by its scope, with its bookkeeping. */
export function learnedRule(input: LearnedRuleInput): PolicyRule {
  const { proposal, place } = input;
  const rule: PolicyRule = { id: input.id, kind: proposal.kind, action: input.decision };
  if (proposal.kind === "command") rule.commands = [proposal.match];
  else {
    rule.paths = [proposal.match];
    if (proposal.operation !== undefined) rule.operations = [proposal.operation];
  }
  if (proposal.scope === "conversation" && place.conversationId !== undefined) rule.conversations = [place.conversationId];
  if (proposal.scope === "workspace" && place.workspace !== undefined) rule.workspaces = [escapeGlob(place.workspace.replace(/(.)\/+$/, "$1"))];
  const learned: LearnedInfo = { addedBy: input.addedBy, addedAt: input.addedAt, fromRequest: input.fromRequest, fired: 0, lastFired: null };
  if (place.conversationId !== undefined) learned.fromConversation = place.conversationId;
  rule.learned = learned;
  return rule;
}

/** A rules file's text: the policy format (a missing or empty file has no rules). */
export function parseLearnedRules(text: string, file: string): PolicyRule[] {
  if (text.trim() === "") return [];
  const policy = parsePolicy(text, file);
  policy.rules.forEach((rule, index) => {
    if (rule.action === "approve" && rule.kind !== "command" && rule.kind !== "file") {
      throw new PolicyError(file, 1, 1, `rules[${index}] (${rule.id}): a learned approve rule covers kind command or file; write the kind`);
    }
  });
  return policy.rules;
}

const FILE_HEADER = `# Rules learned from answers (agy-bridge approve|deny --remember, the page, the HTTP API).
# The policy format (docs/policy.md); edit by hand or revoke with \`agy-bridge policy rules revoke ID\`.
`;

/** The rules file's text for `rules`. */
export function serializeLearnedRules(rules: readonly PolicyRule[]): string {
  return `${FILE_HEADER}${stringify({ version: 1, rules }, { lineWidth: 0 })}`;
}

/** One rule as `policy rules` and `GET /v1/rules` list it. */
export function viewOf(rule: PolicyRule): LearnedRuleView {
  const info = rule.learned;
  return {
    id: rule.id,
    decision: rule.action,
    match: [...(rule.commands ?? []), ...(rule.paths ?? [])].join(", "),
    scope: rule.conversations !== undefined ? "conversation" : rule.workspaces !== undefined ? "workspace" : "everywhere",
    kind: rule.kind === "file" ? "file" : "command",
    addedBy: info?.addedBy ?? "hand",
    addedAt: info?.addedAt ?? "",
    fromRequest: info?.fromRequest ?? "",
    fired: info?.fired ?? 0,
    lastFired: info?.lastFired ?? null,
  };
}
