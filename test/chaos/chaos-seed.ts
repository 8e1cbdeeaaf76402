/**
 * A seed's verdict: its faulted run against the clean run of the same
 * script (the same agy-side moves, no transport faults), and the shrinking
 * of a failing fault list to the shortest one that still fails.
 */
import { isAgySide, label, planFor, type Fault } from "./fault-plan.js";
import { runScript, type RunOutcome } from "./chaos-run.js";
import { TURNS } from "./chaos-script.js";
import { firstDifference } from "./normalise.js";

export interface SeedResult {
  seed: number;
  planned: Fault[];
  outcome: RunOutcome;
  identical: boolean;
  /** Why the run failed, one line each (empty: it passed). */
  problems: string[];
}

/** Clean runs by their agy-side moves: they depend on nothing else. */
const cleanRuns = new Map<string, Promise<RunOutcome>>();

async function cleanRun(agySide: readonly Fault[]): Promise<RunOutcome> {
  const key = agySide.map(label).sort().join(" ");
  let run = cleanRuns.get(key);
  if (run === undefined) {
    run = runScript(agySide).then((outcome) => {
      const wrong = [...outcome.misdelivered, ...outcome.errors, ...(outcome.hang === undefined ? [] : [outcome.hang])];
      if (wrong.length > 0) throw new Error(`the clean run (${key || "no agy-side moves"}) itself failed: ${wrong.join("; ")}`);
      return outcome;
    });
    cleanRuns.set(key, run);
  }
  return run;
}

/** Runs `faults` and compares with the clean run. */
export async function judge(seed: number, faults: readonly Fault[]): Promise<SeedResult> {
  const clean = await cleanRun(faults.filter(isAgySide));
  const outcome = await runScript(faults);
  const difference = outcome.hang === undefined ? firstDifference(clean.log, outcome.log) : undefined;
  const identical = outcome.hang === undefined && difference === undefined;
  const problems = [
    ...(outcome.hang === undefined ? [] : [`hang: ${outcome.hang}`]),
    ...(difference === undefined ? [] : [`log differs at ${difference}`]),
    ...outcome.misdelivered.map((m) => `misdelivered: ${m}`),
    ...outcome.errors,
  ];
  return { seed, planned: [...faults], outcome, identical, problems };
}

export function runSeed(seed: number): Promise<SeedResult> {
  return judge(seed, planFor(seed, TURNS.length));
}

/**
 * The shortest sub-list of `faults` that still fails by `fails`: one fault
 * removed at a time, kept out when the rest still fails, until none can go.
 */
export async function shrinkFaults(faults: readonly Fault[], fails: (faults: readonly Fault[]) => Promise<boolean>): Promise<Fault[]> {
  let current = [...faults];
  for (let i = 0; i < current.length; ) {
    const candidate = current.filter((_, j) => j !== i);
    if (await fails(candidate)) current = candidate;
    else i++;
  }
  return current;
}

/** A failing seed's shortest fault list (faults that never fired go first, when the run still fails without them). */
export async function shrink(seed: number, failing: SeedResult): Promise<Fault[]> {
  const fails = async (faults: readonly Fault[]) => (await judge(seed, faults)).problems.length > 0;
  const firedOnly = failing.planned.filter((f) => failing.outcome.fired.includes(f) || isAgySide(f));
  const start = firedOnly.length < failing.planned.length && (await fails(firedOnly)) ? firedOnly : failing.planned;
  return shrinkFaults(start, fails);
}
