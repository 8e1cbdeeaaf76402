/**
 * Every fuzz campaign at a bounded count, as part of the suite. The seed is
 * fixed so a failure reproduces (`FUZZ_SEED` picks another); `npm run fuzz`
 * runs the long campaigns.
 */
import { describe, expect, it } from "vitest";
import { CAMPAIGNS } from "./campaigns/index.js";
import { formatResults, runCampaign } from "./runner.js";

const SEED = Number(process.env["FUZZ_SEED"] ?? 20261130) >>> 0;

describe("fuzz campaigns (bounded)", () => {
  for (const entry of CAMPAIGNS) {
    it(`${entry.campaign.name}: ${entry.ciCount} inputs with no crash, hang or invariant violation`, async () => {
      const result = await runCampaign(entry.campaign, { seed: SEED, count: entry.ciCount, hangMs: 5000 });
      const report = formatResults([result], (r, f) => `npm run fuzz -- --campaign ${entry.id} --seed ${r.seed} --replay ${f.index}`);
      expect(result.inputs).toBe(entry.ciCount);
      expect({ crashes: result.crashes, hangs: result.hangs, violations: result.violations }, report).toEqual({
        crashes: 0,
        hangs: 0,
        violations: 0,
      });
    }, 120_000);
  }
});
