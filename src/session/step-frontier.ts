/**
 * Which steps of a conversation may still change. Everything below the
 * frontier has settled (USER_INPUT, or a terminal status), so a reconcile or a
 * probe fetches from the frontier with `stepOffset` and costs the steps that
 * can have changed, not the history (spike-notes §10.4 stepOffset).
 */
import { asIndex, asObject, asString, isObject } from "../protocol/json.js";
import { STEP_STATUS, STEP_TYPE } from "../protocol/wire-names.js";
import type { Step, StreamUpdate } from "../protocol/wire-schemas.js";

const SETTLED = new Set<string>([STEP_STATUS.DONE, STEP_STATUS.ERROR, STEP_STATUS.CANCELED, STEP_STATUS.INTERRUPTED, STEP_STATUS.CLEARED]);

export function isSettled(step: unknown): boolean {
  if (!isObject(step)) return true;
  return step["type"] === STEP_TYPE.USER_INPUT || SETTLED.has(asString(step["status"]) ?? "");
}

/** The step's own index (`sourceTrajectoryStepInfo.stepIndex`; absent = 0 except on USER_INPUT, which has none). */
export function ownIndex(step: unknown): number | undefined {
  if (!isObject(step) || step["type"] === STEP_TYPE.USER_INPUT) return undefined;
  const info = asObject(asObject(step["metadata"])?.["sourceTrajectoryStepInfo"]);
  return asIndex(info?.["stepIndex"]) ?? 0;
}

/**
 * Where a `GetCascadeTrajectorySteps` page asked at `offset` really starts:
 * builds without `stepOffset` answer with the whole list from 0.
 */
export function pageStart(steps: readonly unknown[], offset: number): number {
  if (offset === 0) return 0;
  for (let i = 0; i < steps.length; i++) {
    const own = ownIndex(steps[i]);
    if (own !== undefined) return own - i === offset ? offset : Math.max(0, own - i);
  }
  // Only USER_INPUT steps: a full answer would start with history older than the offset.
  return offset;
}

/** How far along its life a step is: agy never moves a step back (PENDING → RUNNING/WAITING/GENERATING → settled). */
function rankOf(step: unknown): number {
  if (isSettled(step)) return 2;
  const status = isObject(step) ? asString(step["status"]) : undefined;
  return status === STEP_STATUS.PENDING || status === STEP_STATUS.QUEUED || status === undefined ? 0 : 1;
}

export class StepFrontier {
  #settled: boolean[] = [];
  #rank: number[] = [];
  #frontier = 0;

  /**
   * The update without the steps it shows at an earlier stage than already
   * seen: a frame sent before a change can arrive after a snapshot that
   * shows the change (they travel on different connections).
   */
  fresher(update: StreamUpdate): StreamUpdate {
    const su = update.mainTrajectoryUpdate?.stepsUpdate;
    const indices = su?.indices;
    const steps = su?.steps;
    if (!Array.isArray(indices) || !Array.isArray(steps) || indices.length !== steps.length) return update;
    const keep: number[] = [];
    indices.forEach((raw, i) => {
      const index = asIndex(typeof raw === "string" ? Number(raw) : raw);
      if (index === undefined || rankOf(steps[i]) >= (this.#rank[index] ?? 0)) keep.push(i);
    });
    if (keep.length === indices.length) return update;
    return {
      ...update,
      mainTrajectoryUpdate: {
        ...update.mainTrajectoryUpdate,
        stepsUpdate: { ...su, indices: keep.map((i) => indices[i]!), steps: keep.map((i) => steps[i]!) },
      },
    };
  }

  /** The lowest index that may still change. */
  get frontier(): number {
    return this.#frontier;
  }

  /** Known number of steps. */
  get length(): number {
    return this.#settled.length;
  }

  observe(index: number, step: unknown): void {
    this.#settled[index] = isSettled(step);
    this.#rank[index] = Math.max(this.#rank[index] ?? 0, rankOf(step));
    if (index < this.#frontier && this.#settled[index] === false) this.#frontier = index;
    this.#advance();
  }

  observePage(steps: readonly Step[], start: number): void {
    steps.forEach((step, i) => {
      this.#settled[start + i] = isSettled(step);
      this.#rank[start + i] = Math.max(this.#rank[start + i] ?? 0, rankOf(step));
    });
    if (start < this.#frontier) {
      for (let i = start; i < this.#frontier; i++) {
        if (this.#settled[i] === false) {
          this.#frontier = i;
          break;
        }
      }
    }
    this.#advance();
  }

  observeUpdate(update: StreamUpdate): void {
    const su = update.mainTrajectoryUpdate?.stepsUpdate;
    const indices = su?.indices;
    const steps = su?.steps;
    if (!Array.isArray(indices) || !Array.isArray(steps) || indices.length !== steps.length) return;
    indices.forEach((raw, i) => {
      const index = asIndex(typeof raw === "string" ? Number(raw) : raw);
      if (index !== undefined) this.observe(index, steps[i]);
    });
  }

  #advance(): void {
    while (this.#frontier < this.#settled.length && this.#settled[this.#frontier] === true) this.#frontier++;
  }
}
