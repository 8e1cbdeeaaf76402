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
}

export interface MeasureOptions {
  warmup?: number;
  runs?: number;
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times measured. */
export async function measure(fn: () => unknown, options: MeasureOptions = {}): Promise<Sample> {
  const warmup = options.warmup ?? 3;
  const runs = options.runs ?? 15;
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
  const warmup = options.warmup ?? 3;
  const runs = options.runs ?? 15;
  const ta: number[] = [];
  const tb: number[] = [];
  for (let r = 0; r < warmup + runs; r++) {
    // Alternate which goes first, so neither always follows the other's garbage.
    const order: [() => unknown, number[]][] = r % 2 === 0 ? [[a, ta], [b, tb]] : [[b, tb], [a, ta]];
    for (const [fn, times] of order) {
      const start = performance.now();
      await fn();
      if (r >= warmup) times.push(performance.now() - start);
    }
  }
  return [summarize(ta), summarize(tb)];
}

/** Median, p90 and p99 of `times` (milliseconds); `times` is left as it was. */
export function summarize(times: readonly number[]): Sample & { p99Ms: number } {
  const sorted = [...times].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), runs: sorted.length };
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
}

export interface BenchSuite {
  title: string;
  run(): Promise<BenchRow[]>;
}

export function ratio(row: BenchRow): number | undefined {
  return row.baseline === undefined ? undefined : row.sample.medianMs / row.baseline.sample.medianMs;
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(4);
}

export function formatTable(title: string, rows: readonly BenchRow[]): string {
  const header = ["case", "median ms", "p90 ms", "baseline", "baseline ms", "ratio", "goal", "met"];
  const body = rows.map((r) => {
    const q = ratio(r);
    return [
      r.name,
      fmt(r.sample.medianMs),
      fmt(r.sample.p90Ms),
      r.baseline?.name ?? "-",
      r.baseline ? fmt(r.baseline.sample.medianMs) : "-",
      q === undefined ? "-" : `${q.toFixed(2)}x`,
      r.goal ?? "-",
      r.met === undefined ? "-" : r.met ? "yes" : "NO",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [
    `## ${title}`,
    "",
    line(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...body.map(line),
    "",
  ].join("\n");
}
