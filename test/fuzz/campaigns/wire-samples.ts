/**
 * Well-formed wire material the campaigns start from before damaging it:
 * captured agy 1.0.10 steps from the fixtures, and Connect stream bodies made
 * of them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encodeJsonEnvelope, FLAG_DATA, FLAG_END_STREAM } from "../../../src/protocol/envelope.js";
import { concat } from "../mutate.js";
import type { Rng } from "../rng.js";

const capturesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "fixtures", "captures", "agy-1.0.10");

let captured: unknown[] | undefined;

/** The captured steps (read once). */
export function capturedSteps(): readonly unknown[] {
  captured ??= readdirSync(capturesDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(capturesDir, f), "utf8")) as unknown);
  return captured;
}

/** A stream update carrying `steps` at `indices`. */
export function stepsUpdate(steps: unknown[], indices: number[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    conversationId: "fuzz-conversation",
    ...extra,
    mainTrajectoryUpdate: { stepsUpdate: { indices, steps, totalLength: Math.max(0, ...indices) + 1 } },
  };
}

/** A handful of updates made from captured steps. */
export function sampleUpdates(rng: Rng): Array<Record<string, unknown>> {
  const steps = capturedSteps();
  return Array.from({ length: rng.between(1, 4) }, (_, i) => {
    const chosen = Array.from({ length: rng.between(0, 3) }, () => structuredClone(rng.pick(steps)));
    return stepsUpdate(
      chosen,
      chosen.map((_, k) => i + k),
      rng.chance(0.3) ? { status: "CASCADE_RUN_STATUS_RUNNING" } : {},
    );
  });
}

/** A whole stream body: `{"update":…}` frames, then a trailer (clean or with an error), sometimes none. */
export function sampleStream(rng: Rng, updates: Array<Record<string, unknown>>): Uint8Array {
  const frames = updates.map((update) => encodeJsonEnvelope(FLAG_DATA, rng.chance(0.9) ? { update } : update));
  const trailer = rng.pick<unknown>([{}, {}, { error: { code: "unavailable", message: "going away" } }, { error: false }, "not an object"]);
  if (rng.chance(0.9)) frames.push(encodeJsonEnvelope(FLAG_END_STREAM, trailer));
  return concat(...frames);
}
