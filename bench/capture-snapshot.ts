/**
 * A large `GetCascadeTrajectorySteps` answer built from the real agy 1.0.10
 * captures (fixtures/captures/agy-1.0.10): the captures repeated in turn, each
 * copy with its own step index, for the snapshot and `map` benchmarks.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const capturesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "captures", "agy-1.0.10");

interface CapturedStep {
  metadata?: { sourceTrajectoryStepInfo?: { stepIndex?: number } };
  [key: string]: unknown;
}

/** `{"steps":[…]}` with `stepCount` steps, as JSON text. */
export function buildCaptureSnapshot(stepCount: number): string {
  const captures = readdirSync(capturesDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const { _fixtureProvenance: _, ...step } = JSON.parse(readFileSync(join(capturesDir, f), "utf8")) as CapturedStep;
      return step;
    });
  const steps = Array.from({ length: stepCount }, (_, index) => {
    const step = structuredClone(captures[index % captures.length]) as CapturedStep;
    const info = step.metadata?.sourceTrajectoryStepInfo;
    // Proto-JSON omits a zero stepIndex, as agy does.
    if (info !== undefined) {
      if (index === 0) delete info.stepIndex;
      else info.stepIndex = index;
    }
    return step;
  });
  return JSON.stringify({ steps });
}
