/**
 * `--policy FILE`, `--workspace DIR` and `--audit-file PATH` for the commands
 * that supervise (watch, serve): the policy read and checked before anything
 * starts, and the audit log every decision goes to.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
// Not the audit barrel: it builds the record schema with zod, which writing a record does not need.
import { createAuditLog, defaultAuditPath, type AuditLog } from "../audit/audit-log.js";
import { createSessionAuditor, type SessionAuditor } from "../audit/session-auditor.js";
import type { Policy, PolicyWithLearned } from "../policy/index.js";
import type { LearnedStore } from "../audit/learned-store.js";
import type { AttachOptions, PolicyOutcome } from "../session/index.js";
import type { CliIo } from "./command.js";
import { terminalText } from "./terminal-text.js";

export const POLICY_OPTIONS = {
  policy: { type: "string" },
  workspace: { type: "string" },
  "audit-file": { type: "string" },
} as const;

export const POLICY_HELP = `  --policy FILE       answer what the policy decides (docs/policy.md); ask leaves it to you
  --workspace DIR     agy's workspace for the policy's {workspace} (default: what agy reports)
  --audit-file PATH   where decisions are logged (default $XDG_STATE_HOME/agy-bridge/audit.jsonl)`;

export interface PolicyValues {
  policy?: string | undefined;
  workspace?: string | undefined;
  "audit-file"?: string | undefined;
}

/**
 * The policy named by `--policy` with the learned rules it includes
 * (`$XDG_CONFIG_HOME/agy-bridge/learned.yaml`, read again whenever it
 * changes: docs/policy.md, "Learned rules"), or undefined; a file that
 * cannot be used is a {@link PolicyError} or a sentence.
 */
export async function readPolicyOption(
  values: PolicyValues,
  env: Readonly<Record<string, string | undefined>> = process.env,
  onProblem?: (message: string) => void,
): Promise<PolicyWithLearned | undefined> {
  const team = await readTeamPolicy(values);
  if (team === undefined) return undefined;
  const { createLearnedStore, defaultLearnedFile } = await import("../audit/learned-store.js");
  let policy: PolicyWithLearned = team;
  // A file that became unusable while running is said where the policy is applied (policyAttachOption), else to `onProblem`.
  const report = (message: string) => (problemSinks.get(policy) ?? onProblem)?.(message);
  const store = createLearnedStore({ file: defaultLearnedFile(env), onProblem: report });
  // Read now: a learned file that cannot be used is refused before anything starts, like the policy.
  store.list();
  policy = { ...team, learned: store.source };
  learnedStores.set(policy, store);
  return policy;
}

/** The store behind each policy {@link readPolicyOption} returned, to count the decisions of its learned rules. */
const learnedStores = new WeakMap<Policy, LearnedStore>();
const problemSinks = new WeakMap<Policy, (message: string) => void>();

async function readTeamPolicy(values: PolicyValues): Promise<Policy | undefined> {
  const file = values.policy;
  if (file === undefined) return undefined;
  // The policy layer (YAML, the shell parser, globs) loads only when a policy is given.
  const { parsePolicy, PolicyError } = await import("../policy/index.js");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PolicyError(file, 1, 1, code === "ENOENT" ? "the policy file does not exist" : `the policy file cannot be read (${code ?? "error"})`);
  }
  return parsePolicy(text, file);
}

export function auditLogFor(io: CliIo, values: PolicyValues): AuditLog {
  return createAuditLog({ path: values["audit-file"] ?? defaultAuditPath(io.env, io.env["HOME"] ?? homedir()) });
}

/** An auditor whose write failures are said once on stderr (the decisions themselves stand). */
export function auditorFor(io: CliIo, log: AuditLog, command: string): SessionAuditor {
  let warned = false;
  return createSessionAuditor(log, {
    onError: (error) => {
      if (warned) return;
      warned = true;
      io.stderr.write(`${terminalText(`agy-bridge ${command}: ${error instanceof Error ? error.message : String(error)}`)}\n`);
    },
  });
}

/** The attach option that applies `policy`, reporting each decision to the auditor and `onDecision`. */
export function policyAttachOption(
  io: CliIo,
  policy: Policy,
  values: PolicyValues,
  auditor: SessionAuditor,
  onDecision?: (outcome: PolicyOutcome) => void,
): Pick<AttachOptions, "policy"> {
  const home = io.env["HOME"] ?? homedir();
  if (learnedStores.has(policy) && !problemSinks.has(policy)) {
    problemSinks.set(policy, (message) => io.stderr.write(`${terminalText(`agy-bridge: ${message}`)}\n`));
  }
  return {
    policy: {
      policy,
      context: { home, ...(values.workspace === undefined ? {} : { workspace: values.workspace }) },
      onDecision: (outcome) => {
        auditor.policy(outcome);
        const rule = outcome.decision.rule;
        if (rule !== null && outcome.result?.result === "delivered") learnedStores.get(policy)?.fired(rule);
        onDecision?.(outcome);
      },
    },
  };
}

/** One human line for a policy decision. */
export function decisionLine(outcome: PolicyOutcome): string {
  const request = outcome.request.request;
  const what =
    request.kind === "permission" ? request.target : request.kind === "question" ? (request.questions[0]?.question ?? "a question") : request.variant;
  const delivered =
    outcome.error !== undefined
      ? ` (not delivered: ${outcome.error})`
      : outcome.result !== undefined && outcome.result.result !== "delivered"
        ? ` (${outcome.result.result})`
        : "";
  return `[policy] ${outcome.decision.decision} ${what} — ${outcome.decision.reason}${delivered}`;
}
