/**
 * `npm run chaos [-- --runs N | --seed S]`: runs seeds through the chaos
 * proxy and prints one row per seed (seed, faults that fired by kind,
 * events, result; with `--seed`, also each fault that fired), the shrunk
 * fault list of each failure, and last:
 * `chaos: <identical>/<runs> runs identical to the clean run, <n> misdelivered answers, <n> hangs`.
 */
import { label, type Fault } from "./fault-plan.js";
import { runSeed, shrink, type SeedResult } from "./chaos-seed.js";

function args(argv: string[]): { seeds: number[]; heap: boolean } {
  const at = (flag: string) => {
    const i = argv.indexOf(flag);
    return i < 0 ? undefined : argv[i + 1];
  };
  const seed = at("--seed");
  if (seed !== undefined) {
    if (!/^\d+$/.test(seed)) throw new Error(`--seed takes a whole number, not "${seed}"`);
    return { seeds: [Number(seed)], heap: true };
  }
  const runs = at("--runs") ?? "20";
  if (!/^\d+$/.test(runs) || Number(runs) < 1) throw new Error(`--runs takes a whole number of runs, not "${runs}"`);
  const first = Number(at("--from") ?? "1");
  return { seeds: Array.from({ length: Number(runs) }, (_, i) => first + i), heap: true };
}

function byKind(fired: readonly Fault[]): string {
  const counts = new Map<string, number>();
  for (const f of fired) counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
  // Sorted: faults at the same step may fire in either order, the count of each kind is the seed's.
  return (
    [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, n]) => `${kind}×${n}`)
      .join(" ") || "-"
  );
}

const heapNow = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

async function main(): Promise<void> {
  const { seeds } = args(process.argv.slice(2));
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`${"seed".padEnd(6)} ${"faults fired (by kind)".padEnd(58)} ${"events".padStart(6)}  result`);
  let identical = 0;
  let misdelivered = 0;
  let hangs = 0;
  const failures: SeedResult[] = [];
  const heap: number[] = [];
  for (const seed of seeds) {
    const r = await runSeed(seed);
    heap.push(heapNow());
    if (r.identical) identical += 1;
    misdelivered += r.outcome.misdelivered.length;
    if (r.outcome.hang !== undefined) hangs += 1;
    const result = r.problems.length === 0 ? "identical" : `FAIL ${r.problems[0]?.slice(0, 160)}`;
    // Events as compared (normalise.ts): how agy's text is sliced into deltas depends on timing, the log does not.
    out(`${String(seed).padEnd(6)} ${byKind(r.outcome.fired).padEnd(58)} ${String(r.outcome.log.length).padStart(6)}  ${result}`);
    if (seeds.length === 1) for (const fault of r.outcome.fired.map(label).sort()) out(`       fired: ${fault}`);
    if (r.problems.length > 0) failures.push(r);
  }
  for (const failure of failures) {
    out(`\nseed ${failure.seed} failed:`);
    for (const problem of failure.problems) out(`  ${problem}`);
    out(`  faults planned: ${failure.planned.map(label).join(", ")}`);
    const shortest = await shrink(failure.seed, failure);
    out(`  shortest fault list that still fails: ${shortest.map(label).join(", ") || "(none: it fails without faults)"}`);
  }
  if ((globalThis as { gc?: unknown }).gc !== undefined && heap.length > 0) {
    // After gc, once each run closed everything: a leak grows with the runs, warm-up does not.
    const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    const at = (i: number) => heap[Math.min(heap.length - 1, i)]!;
    const half = Math.floor(heap.length / 2);
    out(
      `heap after gc: ${mib(at(0))} after run 1, ${mib(at(half))} after run ${half + 1}, ${mib(at(heap.length - 1))} after run ${heap.length} (clean runs are kept for comparison)`,
    );
  }
  out(`chaos: ${identical}/${seeds.length} runs identical to the clean run, ${misdelivered} misdelivered answers, ${hangs} hangs`);
  process.exitCode = identical === seeds.length && misdelivered === 0 && hangs === 0 && failures.length === 0 ? 0 : 1;
}

await main();
