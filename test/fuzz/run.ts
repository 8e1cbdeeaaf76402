/**
 * `npm run fuzz`: long fuzz campaigns with a report table.
 *
 *   npm run fuzz -- [--count N] [--seed S] [--campaign ID]... [--replay INDEX] [--hang-ms MS]
 *
 * Defaults: 100,000 inputs per campaign (env FUZZ_COUNT), a seed from the
 * clock (env FUZZ_SEED), every campaign. The table counts inputs, typed
 * errors (documented refusals), crashes, hangs and invariant violations; each
 * failure is printed with the command that replays it. Exits 1 on any crash,
 * hang or violation.
 */
import { parseArgs } from "node:util";
import { CAMPAIGNS } from "./campaigns/index.js";
import { formatResults, runCampaign, type CampaignResult } from "./runner.js";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    count: { type: "string" },
    seed: { type: "string" },
    campaign: { type: "string", multiple: true },
    replay: { type: "string" },
    "hang-ms": { type: "string" },
  },
  strict: true,
});

function whole(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === "") return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${what} takes a whole number, not ${JSON.stringify(text)}`);
  return n;
}

const count = whole(values.count, "--count") ?? whole(process.env["FUZZ_COUNT"], "FUZZ_COUNT") ?? 100_000;
const seed = (whole(values.seed, "--seed") ?? whole(process.env["FUZZ_SEED"], "FUZZ_SEED") ?? Date.now() % 2 ** 32) >>> 0;
const hangMs = whole(values["hang-ms"], "--hang-ms") ?? 2000;
const replay = whole(values.replay, "--replay");
const wanted = values.campaign ?? [];
const unknown = wanted.filter((id) => !CAMPAIGNS.some((c) => c.id === id));
if (unknown.length > 0) throw new Error(`unknown campaign ${unknown.join(", ")}; known: ${CAMPAIGNS.map((c) => c.id).join(", ")}`);
const chosen = CAMPAIGNS.filter((c) => wanted.length === 0 || wanted.includes(c.id));

process.stdout.write(`fuzz: seed ${seed}, ${replay === undefined ? `${count} inputs per campaign` : `replaying input ${replay}`}\n`);
const results: CampaignResult[] = [];
for (const entry of chosen) {
  const result = await runCampaign(entry.campaign, {
    seed,
    count,
    hangMs,
    keepFailures: replay === undefined ? 5 : 1,
    ...(replay === undefined ? {} : { only: [replay] }),
  });
  results.push(result);
  process.stdout.write(
    `  ${entry.id}: ${result.inputs} inputs, ${result.crashes + result.hangs + result.violations} failures, ${(result.timeMs / 1000).toFixed(1)} s\n`,
  );
}
const idOf = (name: string) => CAMPAIGNS.find((c) => c.campaign.name === name)?.id ?? name;
process.stdout.write(`\n${formatResults(results, (r, f) => `npm run fuzz -- --campaign ${idOf(r.name)} --seed ${r.seed} --replay ${f.index}`)}\n`);
process.exitCode = results.some((r) => r.crashes + r.hangs + r.violations > 0) ? 1 : 0;
