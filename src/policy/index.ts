/**
 * Policy: a team's decisions about agy's requests, pure (a request in, a
 * decision out; no I/O). docs/policy.md is the file format and the rules.
 */
export { decide } from "./decide.js";
export type { PolicyDecision, RuleTrace } from "./decide.js";
export { parsePolicy, parseYamlWith, PolicyError } from "./parse-policy.js";
export { PolicySchema, RuleSchema } from "./policy-schema.js";
export type { FileOperation, LearnedInfo, Policy, PolicyAction, PolicyRule, RuleKind } from "./policy-schema.js";
export { policyRequestOf } from "./policy-request.js";
export type { FileOperationKind, PolicyContext, PolicyRequest } from "./policy-request.js";
export { analyseCommandLine } from "./shell-command.js";
export type { CommandAnalysis, SimpleCommand } from "./shell-command.js";
export { absolutePath, commandPatternMatches, pathGlobMatches } from "./matchers.js";
export {
  defaultScope,
  editedRule,
  LEARNED_SCOPES,
  learnedRule,
  parseLearnedRules,
  proposeRule,
  serializeLearnedRules,
  viewOf,
} from "./learned-rules.js";
export type {
  LearnedDecision,
  LearnedRuleInput,
  LearnedRuleView,
  LearnedScope,
  LearnedSource,
  PolicyWithLearned,
  RequestPlace,
  RuleProposal,
  SaveRule,
} from "./learned-rules.js";
export { parsePolicyCases, runPolicyCases } from "./policy-cases.js";
export type { CaseResult, PolicyCase } from "./policy-cases.js";
