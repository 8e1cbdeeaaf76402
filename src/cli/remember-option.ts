/**
 * `approve|deny … --remember [--scope conversation|workspace|everywhere]
 * [--rule TEXT] [--dry-run]`: the answer, and a rule learned from it
 * (docs/policy.md, "Learned rules"). The proposal is made and checked
 * before anything is sent; the rule is saved once the answer was delivered.
 */
import type { LearnedDecision, LearnedScope, PolicyRequest, RequestPlace, RuleProposal } from "../policy/index.js";
import type { AgySessionApi, PendingSummary } from "../session/index.js";
import { UsageError } from "./args.js";
import type { CliIo } from "./command.js";

export const REMEMBER_OPTIONS = {
  remember: { type: "boolean" },
  rule: { type: "string" },
  "dry-run": { type: "boolean" },
  scope: { type: "string" },
} as const;

export const REMEMBER_HELP = `  --remember          also save a rule learned from this answer (docs/policy.md): the
                      exact command, or the file's path inside the workspace
  --scope S           with --remember: the rule's scope, conversation, workspace
                      (the default when agy names one) or everywhere; the answer
                      itself is then sent once (agy's own persist scope is not used)
  --rule TEXT         with --remember: the rule as you want it saved (a command
                      pattern like "npm test *", or a glob like "{workspace}/src/**");
                      it must still cover this request
  --dry-run           with --remember: print the rule that would be saved; answer nothing
                      (--json: {"interactionId","dryRun":true,"rule":{…the proposal…}});
                      otherwise --json adds the rule saved: "rule":{"id","decision","match","scope"}
`;

export interface RememberValues {
  remember?: boolean | undefined;
  rule?: string | undefined;
  "dry-run"?: boolean | undefined;
  scope?: string | undefined;
}

/** What `--remember` asks for, checked as a usage error (exit 2); undefined without it. */
export interface RememberPlan {
  decision: LearnedDecision;
  scope: LearnedScope | undefined;
  rule: string | undefined;
  dryRun: boolean;
}

export function rememberPlan(command: string, values: RememberValues): RememberPlan | undefined {
  if (values.remember !== true) {
    for (const name of ["rule", "dry-run"] as const) {
      if (values[name] !== undefined) throw new UsageError(`--${name} goes with --remember; run \`agy-bridge ${command} --help\``);
    }
    if (command === "deny" && values.scope !== undefined) throw new UsageError("--scope goes with --remember on deny; run `agy-bridge deny --help`");
    return undefined;
  }
  const scope = values.scope;
  if (scope !== undefined && scope !== "conversation" && scope !== "workspace" && scope !== "everywhere") {
    throw new UsageError(`with --remember, --scope takes conversation, workspace or everywhere; run \`agy-bridge ${command} --help\``);
  }
  if (values.rule !== undefined && values.rule.trim() === "") throw new UsageError(`--rule needs a non-empty rule; run \`agy-bridge ${command} --help\``);
  return { decision: command === "approve" ? "approve" : "deny", scope, rule: values.rule, dryRun: values["dry-run"] === true };
}

/** The policy request a pending summary stands for: a file when its step is a file's, else a command. */
function requestOf(pending: PendingSummary): PolicyRequest {
  if (pending.kind !== "permission") return pending.kind === "question" ? { kind: "question" } : { kind: "other", variant: pending.summary };
  const type = pending.stepType.toUpperCase();
  // A file permission's target is the file's URI (spike-notes §5.1); the step type says the operation, as policyRequestOf reads it.
  if (pending.summary.startsWith("file://") || /FILE|VIEW|WRITE|CODE_ACTION/.test(type)) {
    const operation = /VIEW|READ|LIST|GREP|FIND|SEARCH/.test(type)
      ? "read"
      : /WRITE|CREATE/.test(type)
        ? "create"
        : /EDIT|REPLACE|CODE_ACTION|PROPOSE/.test(type)
          ? "edit"
          : undefined;
    return { kind: "file", path: pending.summary, operation };
  }
  return { kind: "command", commandLine: pending.summary };
}

export interface Remembered {
  proposal: RuleProposal;
  request: PolicyRequest;
  place: RequestPlace;
}

/** The rule that would be saved for `pending`; a request no rule can cover is an error sentence (nothing is sent). */
export async function proposeFor(session: AgySessionApi, pending: PendingSummary | undefined, interactionId: string, plan: RememberPlan): Promise<Remembered> {
  const { AgyBridgeError } = await import("../errors.js");
  if (pending === undefined) {
    throw new AgyBridgeError("invalid_argument", `interaction ${interactionId} is not pending, so there is no request to learn a rule from; nothing was sent`);
  }
  const { editedRule, proposeRule } = await import("../policy/index.js");
  const request = requestOf(pending);
  const workspace = await session.workspace().catch(() => undefined);
  const place: RequestPlace = { conversationId: session.conversationId, ...(workspace === undefined ? {} : { workspace }) };
  const proposed = proposeRule(request, place, { decision: plan.decision, ...(plan.scope === undefined ? {} : { scope: plan.scope }) });
  const proposal = plan.rule === undefined ? proposed : editedRule(proposed, plan.rule, request, place);
  return { proposal, request, place };
}

/** Saves the rule after a delivered answer; the audit record follows. */
export async function saveRemembered(io: CliIo, remembered: Remembered, plan: RememberPlan, interactionId: string) {
  const [{ createLearnedStore, defaultLearnedFile }, { auditLogFor }] = await Promise.all([import("../audit/learned-store.js"), import("./policy-options.js")]);
  const store = createLearnedStore({ file: defaultLearnedFile(io.env), audit: auditLogFor(io, {}) });
  const request = remembered.request;
  return store.save({
    decision: plan.decision,
    proposal: remembered.proposal,
    place: remembered.place,
    addedBy: "cli",
    fromRequest: interactionId,
    request: request.kind === "command" ? { commandLine: request.commandLine } : request.kind === "file" ? { path: request.path } : {},
  });
}

/** The proposal as a person reads it: what it matches, where, and the YAML it will be saved as. */
export async function proposalText(remembered: Remembered, decision: LearnedDecision): Promise<string> {
  const { learnedRule, serializeLearnedRules } = await import("../policy/index.js");
  const { proposal, place } = remembered;
  const rule = learnedRule({ id: "learned-…", decision, proposal, place, addedBy: "cli", addedAt: "(when saved)", fromRequest: "(this request)" });
  const yaml = serializeLearnedRules([rule]).split("\n").slice(4).join("\n");
  const wider = proposal.alternatives.length === 0 ? "" : `\nwider, with --rule: ${proposal.alternatives.map((a) => JSON.stringify(a)).join(", ")}`;
  return `would save: ${decision} ${proposal.kind} ${JSON.stringify(proposal.match)} (scope ${proposal.scope}), as\n${yaml}${wider}\n`;
}
