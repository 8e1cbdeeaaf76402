/**
 * The command-line corpus (test/policy/corpus.yaml): over two hundred tricky
 * command lines and a set of file requests, each with the decision the team
 * policy in fixtures/policy/team-policy.yaml must reach.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePolicy, parsePolicyCases, runPolicyCases } from "../../src/policy/index.js";
import { resolveRealPath } from "../../src/session/policy-runner.js";

const policyFile = new URL("../../fixtures/policy/team-policy.yaml", import.meta.url);
const casesFile = new URL("./corpus.yaml", import.meta.url);
const policy = parsePolicy(readFileSync(policyFile, "utf8"), "team-policy.yaml");
const cases = parsePolicyCases(readFileSync(casesFile, "utf8"), "corpus.yaml");

describe("the command-line corpus under the team policy", () => {
  it("holds at least 200 command lines", () => {
    expect(cases.cases.filter((c) => c.command !== undefined).length).toBeGreaterThanOrEqual(200);
  });

  // As `agy-bridge policy test` runs it: paths resolved on this machine (the corpus's /home/dev does not exist, so they stay as written).
  it.each(
    runPolicyCases(policy, cases, { resolvePath: resolveRealPath }).map(
      (result) => [result.index + 1, JSON.stringify(result.case.command ?? result.case.file ?? result.case.kind), result] as const,
    ),
  )("case %i %s decides as expected", (_index, _label, result) => {
    expect({ decision: result.decision.decision, rule: result.decision.rule }).toEqual({
      decision: result.case.expect,
      rule: result.case.rule === undefined ? result.decision.rule : result.case.rule,
    });
  });
});
