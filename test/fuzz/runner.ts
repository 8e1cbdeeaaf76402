/**
 * The campaign runner: feeds a campaign `count` seeded inputs, sorts each
 * outcome (fine, refused with a typed error, crashed, hung, broke an
 * invariant), keeps the first failures with the seed and index that rebuild
 * them, and shrinks the first failure of each kind to a smaller input.
 * Counts matter here (the table reports them), which is why this is our own
 * loop rather than a property-testing library's.
 */
import { AgyBridgeError } from "../../src/errors.js";
import { createRng, inputSeed, type Rng } from "./rng.js";

/** Thrown by a campaign when the code under test broke one of its promises. */
export class InvariantViolation extends Error {
  override name = "InvariantViolation";
}

/** Fails the input as an invariant violation unless `condition` holds. */
export function invariant(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new InvariantViolation(message());
}

export type Outcome = "ok" | "typed_error" | "crash" | "hang" | "violation";

export interface Campaign<I> {
  readonly name: string;
  /** Makes one input from its own random source. */
  generate(rng: Rng): I;
  /**
   * Runs one input. Returns "typed_error" when the code refused it the
   * documented way; throws {@link InvariantViolation} when a promise broke.
   * Any other throw is judged by {@link isTyped}: typed errors are refusals,
   * everything else is a crash.
   */
  run(input: I): "ok" | "typed_error" | Promise<"ok" | "typed_error">;
  /** The documented error type; default: any `AgyBridgeError`. */
  isTyped?(error: unknown): boolean;
  /** Smaller variants of an input, tried in order while shrinking a failure. */
  shrink?(input: I): Iterable<I>;
  /** A JSON-able view of an input for reports (default: the input itself). */
  show?(input: I): unknown;
}

export interface Failure {
  outcome: Exclude<Outcome, "ok" | "typed_error">;
  /** Index of the input in the run: replay with the same seed and this index. */
  index: number;
  message: string;
  /** The input, shrunk when shrinking was on, as JSON (cut to a few KB). */
  input: string;
}

export interface CampaignResult {
  name: string;
  seed: number;
  inputs: number;
  typedErrors: number;
  crashes: number;
  hangs: number;
  violations: number;
  timeMs: number;
  failures: Failure[];
}

export interface RunOptions {
  seed: number;
  count: number;
  /** An input that takes longer than this counts as a hang (async inputs are abandoned). Default 2 s. */
  hangMs?: number;
  /** Failures kept in full; default 5. */
  keepFailures?: number;
  /** Shrink the first kept failure of each outcome; default true. */
  shrink?: boolean;
  /** Runs only these input indices (replay). */
  only?: readonly number[];
}

const HANG = Symbol("hang");
const SHOWN_INPUT_CHARS = 4000;
const SHOWN_DEPTH = 30;
const SHRINK_ATTEMPTS = 300;

/** Builds input `index` of a run with `seed`, exactly as the run did. */
export function inputAt<I>(campaign: Campaign<I>, seed: number, index: number): I {
  return campaign.generate(createRng(inputSeed(seed, index)));
}

/** Runs one input and sorts its outcome. */
export async function judge<I>(campaign: Campaign<I>, input: I, hangMs: number): Promise<{ outcome: Outcome; message: string }> {
  const started = performance.now();
  try {
    const result = campaign.run(input);
    const verdict = result instanceof Promise ? await within(result, hangMs) : result;
    const took = performance.now() - started;
    if (verdict === HANG || took > hangMs) return { outcome: "hang", message: `no result within ${hangMs} ms` };
    return { outcome: verdict, message: "" };
  } catch (error) {
    if (error instanceof InvariantViolation) return { outcome: "violation", message: error.message };
    const typed = campaign.isTyped?.(error) ?? error instanceof AgyBridgeError;
    if (typed) return { outcome: "typed_error", message: "" };
    const text = error instanceof Error ? `${error.name}: ${error.message}` : `non-error thrown: ${String(error)}`;
    return { outcome: "crash", message: text.slice(0, 500) };
  }
}

/** Runs a campaign and counts its outcomes. */
export async function runCampaign<I>(campaign: Campaign<I>, options: RunOptions): Promise<CampaignResult> {
  const hangMs = options.hangMs ?? 2000;
  const keep = options.keepFailures ?? 5;
  const result: CampaignResult = {
    name: campaign.name,
    seed: options.seed,
    inputs: 0,
    typedErrors: 0,
    crashes: 0,
    hangs: 0,
    violations: 0,
    timeMs: 0,
    failures: [],
  };
  const shrunk = new Set<Outcome>();
  const started = performance.now();
  const indices = options.only ?? Array.from({ length: options.count }, (_, i) => i);
  for (const index of indices) {
    const input = inputAt(campaign, options.seed, index);
    const { outcome, message } = await judge(campaign, input, hangMs);
    result.inputs++;
    if (outcome === "ok") continue;
    if (outcome === "typed_error") {
      result.typedErrors++;
      continue;
    }
    if (outcome === "crash") result.crashes++;
    else if (outcome === "hang") result.hangs++;
    else result.violations++;
    if (result.failures.length >= keep) continue;
    let shown = input;
    let shownMessage = message;
    if ((options.shrink ?? true) && !shrunk.has(outcome) && outcome !== "hang") {
      shrunk.add(outcome);
      ({ input: shown, message: shownMessage } = await shrinkFailure(campaign, input, outcome, message, hangMs));
    }
    result.failures.push({ outcome, index, message: shownMessage, input: showInput(campaign, shown) });
  }
  result.timeMs = performance.now() - started;
  return result;
}

async function shrinkFailure<I>(campaign: Campaign<I>, input: I, outcome: Outcome, message: string, hangMs: number): Promise<{ input: I; message: string }> {
  if (campaign.shrink === undefined) return { input, message };
  let current = input;
  let currentMessage = message;
  let attempts = 0;
  let improved = true;
  while (improved && attempts < SHRINK_ATTEMPTS) {
    improved = false;
    for (const candidate of campaign.shrink(current)) {
      if (++attempts > SHRINK_ATTEMPTS) break;
      const verdict = await judge(campaign, candidate, hangMs);
      if (verdict.outcome === outcome) {
        current = candidate;
        currentMessage = verdict.message;
        improved = true;
        break;
      }
    }
  }
  return { input: current, message: currentMessage };
}

function showInput<I>(campaign: Campaign<I>, input: I): string {
  const view = limitDepth(campaign.show === undefined ? input : campaign.show(input), SHOWN_DEPTH);
  let text: string;
  try {
    text = JSON.stringify(view, (_key, value: unknown) =>
      value instanceof Uint8Array ? `bytes:${Buffer.from(value).toString("base64")}` : typeof value === "bigint" ? `${value}n` : value,
    );
  } catch (error) {
    text = `(not JSON-able: ${error instanceof Error ? error.message : String(error)})`;
  }
  return text.length > SHOWN_INPUT_CHARS ? `${text.slice(0, SHOWN_INPUT_CHARS)}… (${text.length} chars)` : text;
}

/** A copy of `value` with anything deeper than `depth` replaced by a note (inputs may nest thousands deep). */
function limitDepth(value: unknown, depth: number): unknown {
  if (value instanceof Uint8Array || typeof value !== "object" || value === null) return value;
  if (depth === 0) return `(nested deeper: ${nestingDepth(value)} more levels)`;
  if (Array.isArray(value)) return value.map((item) => limitDepth(item, depth - 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: limitDepth(item, depth - 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** How deep the first branch of `value` goes, counted without recursion. */
function nestingDepth(value: unknown): number {
  let levels = 0;
  let node = value;
  while (typeof node === "object" && node !== null && levels < 1_000_000) {
    const first = Object.values(node)[0];
    levels++;
    node = first;
  }
  return levels;
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof HANG> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<typeof HANG>((resolve) => {
    timer = setTimeout(() => resolve(HANG), ms);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

/** The report table, with the seed and a replay line per failure. */
export function formatResults(results: readonly CampaignResult[], replayCommand: (r: CampaignResult, f: Failure) => string): string {
  const header = ["campaign", "inputs", "typed errors", "crashes", "hangs", "invariant violations", "time"];
  const rows = results.map((r) => [
    r.name,
    String(r.inputs),
    String(r.typedErrors),
    String(r.crashes),
    String(r.hangs),
    String(r.violations),
    `${(r.timeMs / 1000).toFixed(1)} s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const out = [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line), ""];
  const seeds = [...new Set(results.map((r) => r.seed))];
  out.push(`seed ${seeds.join(", ")}`);
  for (const r of results) {
    for (const f of r.failures) {
      out.push("", `${r.name} #${f.index}: ${f.outcome}: ${f.message}`, `  replay: ${replayCommand(r, f)}`, `  input: ${f.input}`);
    }
  }
  return out.join("\n");
}
