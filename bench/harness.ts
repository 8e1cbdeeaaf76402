/**
 * Tiny benchmark harness: median wall time over repeated runs, and a table that
 * puts every case next to a baseline measured in the same run.
 */
import { performance } from "node:perf_hooks";

export interface Sample {
  /** Median milliseconds per run. */
  medianMs: number;
  /** 90th percentile milliseconds per run. */
  p90Ms: number;
  runs: number;
  /** The fastest and the slowest run, when the row kept them (the table's "min-max ms"). */
  minMs?: number;
  maxMs?: number;
}

/**
 * `npm run bench -- --quick` (bench/run.ts sets AGY_BRIDGE_BENCH_QUICK=1): a
 * short mode for CI that runs every row with as few runs as it can, so a
 * regression that doubles a figure shows in any run. Figures are noisier.
 */
export function isQuick(): boolean {
  return process.env["AGY_BRIDGE_BENCH_QUICK"] === "1";
}

/** `full` runs normally, `quick` under {@link isQuick}. */
export function runsFor(full: number, quick = 1): number {
  return isQuick() ? Math.min(full, quick) : full;
}

export interface MeasureOptions {
  warmup?: number;
  runs?: number;
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times measured. */
export async function measure(fn: () => unknown, options: MeasureOptions = {}): Promise<Sample> {
  const warmup = runsFor(options.warmup ?? 3);
  const runs = runsFor(options.runs ?? 15, 3);
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return summarize(times);
}

/**
 * Runs `a` and `b` in alternation (`warmup` rounds unmeasured), so load from
 * other processes on a shared machine falls on both sides alike: for rows
 * whose goal is a ratio of two sub-millisecond figures.
 */
export async function measurePair(a: () => unknown, b: () => unknown, options: MeasureOptions = {}): Promise<[Sample, Sample]> {
  const warmup = runsFor(options.warmup ?? 3);
  const runs = runsFor(options.runs ?? 15, 3);
  const ta: number[] = [];
  const tb: number[] = [];
  for (let r = 0; r < warmup + runs; r++) {
    // Alternate which goes first, so neither always follows the other's garbage.
    const order: [() => unknown, number[]][] =
      r % 2 === 0
        ? [
            [a, ta],
            [b, tb],
          ]
        : [
            [b, tb],
            [a, ta],
          ];
    for (const [fn, times] of order) {
      const start = performance.now();
      await fn();
      if (r >= warmup) times.push(performance.now() - start);
    }
  }
  return [summarize(ta), summarize(tb)];
}

/** Median, p90, p99, min and max of `times` (milliseconds); `times` is left as it was. */
export function summarize(times: readonly number[]): Sample & { p99Ms: number; minMs: number; maxMs: number } {
  const sorted = [...times].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), runs: sorted.length, minMs: sorted[0] ?? Number.NaN, maxMs: sorted.at(-1) ?? Number.NaN };
}

export interface BenchRow {
  /** What was measured. */
  name: string;
  sample: Sample;
  /** The baseline this row is compared with, measured in the same run. */
  baseline?: { name: string; sample: Sample };
  /** The goal, in words, e.g. "<= 1.5x JSON.parse". */
  goal?: string;
  /** Whether the goal is met; undefined when the row has no goal. */
  met?: boolean;
  /** A ratio goal's limit (1.3 for "<= 1.3x"): a row that misses it says by how much in the "met" column. */
  limit?: number;
  /**
   * For rows measured in pairs (row, baseline, row, baseline, …): the ratio of
   * each pair, summarised. The table's ratio is then the median pair's ratio,
   * with the min and max beside it, rather than one median over the other.
   */
  pairedRatio?: { min: number; median: number; max: number };
}

export interface BenchSuite {
  title: string;
  run(): Promise<BenchRow[]>;
}

export function ratio(row: BenchRow): number | undefined {
  if (row.pairedRatio !== undefined) return row.pairedRatio.median;
  return row.baseline === undefined ? undefined : row.sample.medianMs / row.baseline.sample.medianMs;
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(4);
}

export function formatTable(title: string, rows: readonly BenchRow[]): string {
  const header = ["case", "median ms", "p90 ms", "min-max ms", "baseline", "baseline ms", "ratio", "goal", "met"];
  const span = (s: Sample) => (s.minMs === undefined || s.maxMs === undefined ? "-" : `${fmt(s.minMs)}-${fmt(s.maxMs)}`);
  const body = rows.map((r) => {
    const q = ratio(r);
    const range = r.pairedRatio === undefined ? "" : ` (${r.pairedRatio.min.toFixed(2)}-${r.pairedRatio.max.toFixed(2)})`;
    return [
      r.name,
      fmt(r.sample.medianMs),
      fmt(r.sample.p90Ms),
      span(r.sample),
      r.baseline?.name ?? "-",
      r.baseline ? fmt(r.baseline.sample.medianMs) : "-",
      q === undefined ? "-" : `${q.toFixed(2)}x${range}`,
      r.goal ?? "-",
      r.met === undefined ? "-" : r.met ? "yes" : q !== undefined && r.limit !== undefined ? `NO (+${(q - r.limit).toFixed(2)}x)` : "NO",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [`## ${title}`, "", line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line), ""].join("\n");
}
