/**
 * `agy-bridge policy check|test`: what a policy decides, without agy. Teams
 * run `policy test` in their own CI to keep their policy under test.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import {
  decide,
  parsePolicy,
  parsePolicyCases,
  PolicyError,
  runPolicyCases,
  type LearnedSource,
  type Policy,
  type PolicyDecision,
  type PolicyRequest,
} from "../policy/index.js";
import { resolveRealPath } from "../session/policy-runner.js";
import { UsageError } from "./args.js";
import { defineCommand, type CliIo, type Command } from "./command.js";
import { terminalText } from "./terminal-text.js";

const HELP = `Usage: agy-bridge policy check POLICY [--workspace DIR] [--json] -- COMMAND LINE…
       agy-bridge policy check POLICY [--workspace DIR] [--json] --file-path P --operation create|edit|read
       agy-bridge policy check POLICY [--json] --kind question|other
       agy-bridge policy test POLICY CASES.yaml [--json]
       agy-bridge policy rules [--json]
       agy-bridge policy rules revoke ID [--json]

check   prints what POLICY decides for one request, which rule decided, and
        why the rules before it did not; the learned rules (below) are
        included, as a supervisor includes them. The words after \`--\` are joined
        with spaces into the command line (quote it as one word to keep
        your own spacing).
test    runs a table of expected decisions (docs/policy.md) and exits 1
        on any mismatch.
rules   lists the rules learned from answers (approve|deny --remember),
        from $XDG_CONFIG_HOME/agy-bridge/learned.yaml; \`rules revoke ID\`
        removes one, and a running watch --policy or serve stops applying
        it at its next decision.

Options:
  --workspace DIR   agy's workspace root, for {workspace} in path globs and
                    relative paths (default: the current directory)
  --file-path P     a file request's path (relative paths resolve against
                    the workspace)
  --operation OP    create, edit or read (with --file-path)
  --kind K          question or other
  --json            check: exactly {"decision","rule","reason"};
                    test: one JSON object per case, then a summary;
                    rules: {"rules":[{"id","decision","match","scope","addedBy",
                    "addedAt","fromRequest","fired","lastFired"}]};
                    rules revoke: {"revoked":{…the rule…}}
  -h, --help        show this help

Exit status: 0 on a decision (check), when every case passes (test), on a
listing or a revocation (rules); 1 when a case fails, the policy, cases or
learned rules file is invalid (printed as file:line:column: message), or
no learned rule has the ID; 2 on a usage error.
`;

const OPERATIONS = ["create", "edit", "read"] as const;
const KINDS = ["question", "other"] as const;

export const policyCommand: Command = defineCommand({
  name: "policy",
  summary: "check what a policy file decides for a command, a file or a question",
  help: HELP,
  options: {
    workspace: { type: "string" },
    "file-path": { type: "string" },
    operation: { type: "string" },
    kind: { type: "string" },
    json: { type: "boolean" },
  },
  positionals: { min: 1, max: Infinity, name: "POLICY file" },
  async run(io, args) {
    const [verb, policyFile, ...rest] = args.positionals;
    if (verb === "rules") return runRules(io, args.positionals.slice(1), args.values.json === true);
    if (verb !== "check" && verb !== "test") throw new UsageError("the first word must be check, test or rules; run `agy-bridge policy --help`");
    if (policyFile === undefined) throw new UsageError(`policy ${verb} needs the POLICY file; run \`agy-bridge policy --help\``);
    const policy = await loadPolicy(io, policyFile ?? "");
    if (policy === undefined) return 1;
    if (verb === "test") {
      if (rest.length !== 1) throw new UsageError("policy test takes POLICY and one CASES.yaml file");
      return runTest(io, policy, rest[0] ?? "", args.values.json === true);
    }
    const request = checkRequest(rest, args.values);
    const workspace = args.values.workspace ?? io.env["PWD"];
    const home = io.env["HOME"] ?? homedir();
    // Paths are resolved through symlinks on this machine, as a session would (docs/policy.md, "Files").
    // check includes the learned rules, as a supervisor would; test does not, so a CI run depends on its files alone.
    const learned = await learnedSource(io);
    if (learned === undefined) return 1;
    const decision = decide({ ...policy, learned }, request, {
      ...(workspace === undefined ? {} : { workspace }),
      home,
      resolvePath: resolveRealPath,
    });
    if (args.values.json === true) {
      io.stdout.write(`${JSON.stringify({ decision: decision.decision, rule: decision.rule, reason: decision.reason })}\n`);
    } else {
      io.stdout.write(describe(decision));
    }
    return 0;
  },
});

function checkRequest(
  rest: readonly string[],
  values: { "file-path"?: string | undefined; operation?: string | undefined; kind?: string | undefined },
): PolicyRequest {
  const given = [rest.length > 0, values["file-path"] !== undefined, values.kind !== undefined].filter(Boolean).length;
  if (given !== 1) throw new UsageError("give exactly one request: `-- COMMAND LINE…`, --file-path P, or --kind question|other");
  if (values.operation !== undefined && !OPERATIONS.includes(values.operation as never)) {
    throw new UsageError(`--operation must be one of ${OPERATIONS.join(", ")}`);
  }
  if (values.operation !== undefined && values["file-path"] === undefined) throw new UsageError("--operation goes with --file-path");
  if (values.kind !== undefined) {
    if (!KINDS.includes(values.kind as never)) throw new UsageError(`--kind must be one of ${KINDS.join(", ")} (commands go after --, files with --file-path)`);
    return values.kind === "question" ? { kind: "question" } : { kind: "other", variant: "" };
  }
  const path = values["file-path"];
  if (path !== undefined) {
    if (path === "") throw new UsageError("--file-path needs a non-empty path");
    return { kind: "file", path, operation: values.operation as (typeof OPERATIONS)[number] | undefined };
  }
  return { kind: "command", commandLine: rest.join(" ") };
}

async function loadPolicy(io: CliIo, file: string): Promise<Policy | undefined> {
  const text = await readText(io, file, "policy");
  if (text === undefined) return undefined;
  try {
    return parsePolicy(text, file);
  } catch (error) {
    if (error instanceof PolicyError) {
      io.stderr.write(`${error.message}\n`);
      return undefined;
    }
    throw error;
  }
}

async function readText(io: CliIo, file: string, what: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "it does not exist" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "it is a directory" : "it cannot be read";
    io.stderr.write(`agy-bridge policy: cannot read the ${what} file ${JSON.stringify(file)}: ${why}\n`);
    return undefined;
  }
}

async function runTest(io: CliIo, policy: Policy, casesFile: string, json: boolean): Promise<number> {
  const text = await readText(io, casesFile, "cases");
  if (text === undefined) return 1;
  let results;
  try {
    results = runPolicyCases(policy, parsePolicyCases(text, casesFile), { resolvePath: resolveRealPath });
  } catch (error) {
    if (error instanceof PolicyError) {
      io.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const failed = results.filter((r) => !r.passed);
  for (const result of results) {
    const label = result.case.name ?? result.case.command ?? result.case.file ?? result.case.kind ?? "";
    if (json) {
      io.stdout.write(
        `${JSON.stringify({ case: result.index + 1, name: label, expect: result.case.expect, expectRule: result.case.rule ?? undefined, decision: result.decision.decision, rule: result.decision.rule, passed: result.passed, reason: result.decision.reason })}\n`,
      );
    } else if (!result.passed) {
      const expected = result.case.rule === undefined ? result.case.expect : `${result.case.expect} by ${result.case.rule ?? "no rule"}`;
      io.stdout.write(
        `FAIL case ${result.index + 1} ${JSON.stringify(label)}: expected ${expected}, got ${result.decision.decision} by ${result.decision.rule ?? "no rule"} — ${result.decision.reason}\n`,
      );
    }
  }
  const summary = { passed: results.length - failed.length, failed: failed.length };
  io.stdout.write(json ? `${JSON.stringify(summary)}\n` : `${summary.passed} passed, ${summary.failed} failed\n`);
  return failed.length === 0 ? 0 : 1;
}

function describe(decision: PolicyDecision): string {
  const lines = [`${decision.decision}${decision.rule === null ? "" : ` (rule ${decision.rule})`}: ${decision.reason}`];
  if (decision.instruction !== undefined) lines.push(`  instruction for agy: ${decision.instruction}`);
  for (const step of decision.trace) {
    if (!step.matched) lines.push(`  rule ${step.rule} did not decide: it ${step.why}`);
  }
  return `${lines.join("\n")}\n`;
}

/** `policy rules [revoke ID]`: the learned rules, or one removed (written to the audit log). */
async function runRules(io: CliIo, words: readonly string[], json: boolean): Promise<number> {
  const [{ createLearnedStore, defaultLearnedFile }, { auditLogFor }] = await Promise.all([import("../audit/learned-store.js"), import("./policy-options.js")]);
  if (words.length !== 0 && !(words[0] === "revoke" && words.length === 2)) {
    throw new UsageError("policy rules takes nothing, or revoke ID; run `agy-bridge policy --help`");
  }
  const store = createLearnedStore({ file: defaultLearnedFile(io.env), audit: auditLogFor(io, {}) });
  try {
    if (words[0] === "revoke") {
      const id = words[1] ?? "";
      const revoked = await store.revoke(id, "cli");
      if (revoked === undefined) {
        io.stderr.write(`${terminalText(`agy-bridge policy: no learned rule has the id ${JSON.stringify(id)}; \`agy-bridge policy rules\` lists them`)}\n`);
        return 1;
      }
      io.stdout.write(
        json
          ? `${JSON.stringify({ revoked })}\n`
          : `${terminalText(`revoked ${revoked.id}: ${revoked.decision} ${JSON.stringify(revoked.match)} (${revoked.scope})`)}\n`,
      );
      return 0;
    }
    const rules = store.list();
    if (json) io.stdout.write(`${JSON.stringify({ rules })}\n`);
    else if (rules.length === 0) io.stdout.write(`no learned rules in ${store.file}\n`);
    else {
      for (const rule of rules) {
        const last = rule.lastFired === null ? "never fired" : `fired ${rule.fired}×, last ${rule.lastFired}`;
        // A hand-edited file may hold anything: one safe line per rule.
        const line = `${rule.id}  ${rule.decision} ${rule.kind} ${JSON.stringify(rule.match)}  scope ${rule.scope}  added by ${rule.addedBy} ${rule.addedAt} from ${rule.fromRequest}  ${last}`;
        io.stdout.write(`${terminalText(line)}\n`);
      }
    }
    return 0;
  } catch (error) {
    if (error instanceof PolicyError) {
      io.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/** The learned rules file's rules for `check`, read once; undefined (said on stderr) when it cannot be used. */
async function learnedSource(io: CliIo): Promise<LearnedSource | undefined> {
  const { createLearnedStore, defaultLearnedFile } = await import("../audit/learned-store.js");
  const store = createLearnedStore({ file: defaultLearnedFile(io.env) });
  try {
    store.list();
  } catch (error) {
    if (error instanceof PolicyError) {
      io.stderr.write(`${error.message}\n`);
      return undefined;
    }
    throw error;
  }
  return store.source;
}
