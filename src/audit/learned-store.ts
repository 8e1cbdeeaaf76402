/**
 * The learned rules file on disk (docs/policy.md, "Learned rules"):
 * `$XDG_CONFIG_HOME/agy-bridge/learned.yaml` by default, the policy format,
 * written whole to a temporary file (0600) and renamed over the old one, so
 * a reader never sees half a file. A running supervisor reads it again
 * before a decision whenever its inode, size or modification time changed,
 * so a rule saved or revoked elsewhere applies to the next request.
 * Creation and revocation go to the audit log.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { AuditLog } from "./audit-log.js";
import { AgyBridgeError } from "../errors.js";
import {
  learnedRule,
  parseLearnedRules,
  serializeLearnedRules,
  viewOf,
  type LearnedRuleView,
  type LearnedSource,
  type PolicyRule,
  type SaveRule,
} from "../policy/index.js";

/** `$XDG_CONFIG_HOME/agy-bridge/learned.yaml`, else `~/.config/agy-bridge/learned.yaml`. */
export function defaultLearnedFile(env: Readonly<Record<string, string | undefined>>, home: string = env["HOME"] ?? homedir()): string {
  const config = env["XDG_CONFIG_HOME"] !== undefined && env["XDG_CONFIG_HOME"] !== "" ? env["XDG_CONFIG_HOME"] : join(home, ".config");
  return join(config, "agy-bridge", "learned.yaml");
}

export type { SaveRule } from "../policy/index.js";

export interface LearnedStore {
  readonly file: string;
  /** The rules as listed, read now. */
  list(): LearnedRuleView[];
  /** Saves a new rule; the audit record follows. */
  save(input: SaveRule): Promise<LearnedRuleView>;
  /** Removes rule `id`; undefined when there is none. */
  revoke(id: string, by: string): Promise<LearnedRuleView | undefined>;
  /** Counts a decision by rule `id` (nothing when it is not a learned rule). */
  fired(id: string): void;
  /** The rules for decide(), read again whenever the file changed. */
  readonly source: LearnedSource;
}

export interface LearnedStoreOptions {
  file: string;
  audit?: AuditLog;
  now?: () => Date;
  /** Told when the file changed into one that cannot be used (its rules are then left out: asked, never approved). */
  onProblem?: (message: string) => void;
}

export function createLearnedStore(options: LearnedStoreOptions): LearnedStore {
  const file = options.file;
  const now = options.now ?? (() => new Date());
  let seen = "";
  let cached: PolicyRule[] = [];

  const read = (): PolicyRule[] => {
    const text = readText(file);
    return text === undefined ? [] : parseLearnedRules(text, file);
  };
  const write = (rules: readonly PolicyRule[]): void => {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temporary, serializeLearnedRules(rules), { mode: 0o600 });
    renameSync(temporary, file);
  };
  const audit = async (rule: PolicyRule, delivery: "rule_created" | "rule_revoked", by: string, request: SaveRule["request"]): Promise<void> => {
    const view = viewOf(rule);
    await options.audit?.append({
      conversationId: rule.learned?.fromConversation ?? "",
      interactionId: view.fromRequest,
      kind: "rule",
      request,
      decision: view.decision,
      decidedBy: by,
      delivery,
      reason: `learned rule ${view.id}: ${view.decision} ${view.kind} ${JSON.stringify(view.match)} (${view.scope})`,
    });
  };

  const source: LearnedSource = {
    rules() {
      const stamp = stampOf(file);
      if (stamp === seen) return cached;
      seen = stamp;
      try {
        cached = read();
      } catch (error) {
        cached = [];
        options.onProblem?.(`the learned rules file is left out until it is fixed: ${error instanceof Error ? error.message : String(error)}`);
      }
      return cached;
    },
  };

  return {
    file,
    source,
    list: () => read().map(viewOf),
    async save(input) {
      const rules = read();
      const id = `learned-${randomBytes(4).toString("hex")}`;
      const rule = learnedRule({
        id,
        decision: input.decision,
        proposal: input.proposal,
        place: input.place,
        addedBy: input.addedBy,
        addedAt: now().toISOString(),
        fromRequest: input.fromRequest,
      });
      write([...rules, rule]);
      await audit(rule, "rule_created", input.addedBy, input.request);
      return viewOf(rule);
    },
    async revoke(id, by) {
      const rules = read();
      const rule = rules.find((entry) => entry.id === id);
      if (rule === undefined) return undefined;
      write(rules.filter((entry) => entry !== rule));
      await audit(rule, "rule_revoked", by, requestOfRule(rule));
      return viewOf(rule);
    },
    fired(id) {
      if (!id.startsWith("learned-")) return;
      try {
        const rules = read();
        const rule = rules.find((entry) => entry.id === id);
        if (rule?.learned === undefined) return;
        rule.learned.fired += 1;
        rule.learned.lastFired = now().toISOString();
        write(rules);
      } catch (error) {
        options.onProblem?.(`rule ${id} fired, but the learned rules file could not be updated: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}

function requestOfRule(rule: PolicyRule): SaveRule["request"] {
  if (rule.commands?.[0] !== undefined) return { commandLine: rule.commands[0] };
  if (rule.paths?.[0] !== undefined) return { path: rule.paths[0] };
  return {};
}

/** The file's text; undefined when it does not exist. */
function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new AgyBridgeError("invalid_argument", `The learned rules file ${file} cannot be read (${code ?? "error"}); check its permissions.`);
  }
}

/** What changes whenever the file is replaced or written: inode, size, modification time. */
function stampOf(file: string): string {
  try {
    const stat = statSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}`;
  } catch {
    return "missing";
  }
}
