/**
 * A real learned rules file in a temporary directory, the rule offers serve
 * gives Telegram and ntfy over it, and the policy that includes it — so a
 * channel test can press "Always allow" and see the next identical request
 * decided by the saved rule.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLearnedStore, type LearnedStore } from "../../../src/audit/learned-store.js";
import type { RuleOffers } from "../../../src/notify/rule-offer.js";
import { decide, parsePolicy, type PolicyDecision } from "../../../src/policy/index.js";
import { createRuleOffers } from "../../../src/server/rule-offers.js";

export const WORKSPACE = "/home/ana/project";

export interface LearnedWorld {
  store: LearnedStore;
  offers: RuleOffers;
  /** The decision for a command in conversation `conv-1` of {@link WORKSPACE}: a team policy that asks, then the learned rules. */
  decideCommand(commandLine: string): PolicyDecision;
  close(): Promise<void>;
}

export async function startLearnedWorld(): Promise<LearnedWorld> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-learned-"));
  const store = createLearnedStore({ file: join(dir, "agy-bridge", "learned.yaml") });
  const offers = createRuleOffers({ rules: store, place: (conversationId) => ({ conversationId, workspace: WORKSPACE }) });
  const policy = { ...parsePolicy("version: 1\ndefault: ask\n", "team.yaml"), learned: store.source };
  return {
    store,
    offers,
    decideCommand: (commandLine) => decide(policy, { kind: "command", commandLine }, { conversationId: "conv-1", workspace: WORKSPACE }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
