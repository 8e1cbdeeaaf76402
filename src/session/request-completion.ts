/**
 * Completing stream frames. agy's stream projection drops
 * `metadata.toolCall` (agy 1.0.10, spike-notes §3.4), which holds a
 * question's multi-select flags (§4.3) and the arguments of tools whose typed
 * body does not repeat them. Before a frame goes to the tracker, every step
 * the tracker says needs its full version (`needsFullStep`) is read with one
 * `GetCascadeTrajectorySteps` page from the lowest such index (`stepOffset`,
 * §10.4) and replaced by that version, so the events a live reader gets say
 * what a replay of the same steps says. The frame is held while the page is
 * read, and the reader handles frames one at a time, so order is kept.
 */
import type { MapperEvent, TrajectoryTracker } from "../mapper/index.js";
import { asIndex, isObject } from "../protocol/json.js";
import type { Step, StreamUpdate } from "../protocol/wire-schemas.js";
import { ownIndex, pageStart } from "./step-frontier.js";

/** Reads a page of the conversation's steps from `stepOffset`. */
export type PageReader = (stepOffset: number) => Promise<readonly Step[]>;

export interface CompletedFrame {
  update: StreamUpdate;
  /** Said when a step could not be read in full: its events then say what the frame had. */
  diagnostics: MapperEvent[];
}

/**
 * The frame with the steps that need it replaced by their full versions.
 * When the read fails, the frame comes back as it was with an
 * `incomplete_step` diagnostic — or, with `rethrow`, the read's error is
 * thrown, for a caller that would rather read the steps again (the session
 * reconnects: the new stream's replay brings them back).
 */
export async function completeFrame(
  update: StreamUpdate,
  tracker: TrajectoryTracker,
  read: PageReader,
  options: { rethrow?: boolean } = {},
): Promise<CompletedFrame> {
  const su = update.mainTrajectoryUpdate?.stepsUpdate;
  const indices = su?.indices;
  const steps = su?.steps;
  if (!Array.isArray(indices) || !Array.isArray(steps) || indices.length !== steps.length) return { update, diagnostics: [] };
  const frameTrajectoryId = typeof update.trajectoryId === "string" && update.trajectoryId !== "" ? update.trajectoryId : undefined;
  const wanted = new Map<number, number>();
  steps.forEach((step, i) => {
    const index = asIndex(indices[i]);
    if (index !== undefined && tracker.needsFullStep(step, index, frameTrajectoryId)) wanted.set(i, index);
  });
  if (wanted.size === 0) return { update, diagnostics: [] };
  const from = Math.min(...wanted.values());
  let page: readonly Step[];
  try {
    page = await read(from);
  } catch (error) {
    if (options.rethrow === true) throw error;
    const why = error instanceof Error ? error.message : String(error);
    return { update, diagnostics: [incomplete(tracker.conversationId, from, `reading it in full failed (${why.replace(/[.\s]+$/, "")})`)] };
  }
  const start = pageStart(page, from);
  const completed = [...steps];
  const diagnostics: MapperEvent[] = [];
  for (const [i, index] of wanted) {
    const full = page[index - start];
    // The page's step must be the frame's: the same index (a USER_INPUT never needs completing).
    if (isObject(full) && ownIndex(full) === index) completed[i] = full;
    else diagnostics.push(incomplete(tracker.conversationId, index, "the snapshot did not have it"));
  }
  const main = update.mainTrajectoryUpdate;
  return { update: { ...update, mainTrajectoryUpdate: { ...main, stepsUpdate: { ...su, steps: completed } } }, diagnostics };
}

function incomplete(conversationId: string, stepIndex: number, why: string): MapperEvent {
  return {
    type: "diagnostic",
    conversationId,
    stepIndex,
    code: "incomplete_step",
    message: `Step ${stepIndex} came from the stream without fields its events need (a question's multi-select flags or tool arguments), and ${why}; its events say what the stream had.`,
  };
}
