/**
 * Ratios of runs measured in pairs (case, baseline, case, baseline, …): each
 * pair's ratio, summarised, so a slow stretch of a loaded machine moves one
 * pair, not the row. The load average is read beside the figures, because on
 * a shared machine it says how much a figure can be trusted.
 */
import { loadavg } from "node:os";

/** min / median / max of `case[i] / baseline[i]` over the pairs. */
export function pairedRatio(times: readonly number[], baselineTimes: readonly number[]): { min: number; median: number; max: number } {
  const ratios = times.map((t, i) => t / (baselineTimes[i] ?? Number.NaN)).sort((x, y) => x - y);
  return { min: ratios[0] ?? Number.NaN, median: ratios[Math.floor(ratios.length / 2)] ?? Number.NaN, max: ratios.at(-1) ?? Number.NaN };
}

/** The 1-minute load average, as the figures' context: "load 2.61". */
export function loadNote(): string {
  return `load ${(loadavg()[0] ?? 0).toFixed(2)}`;
}
