/**
 * What `agy-bridge map` reads, as data: a step, an array of steps, a
 * `GetCascadeTrajectorySteps` response (`{"steps":[...]}`), stream frames
 * (`{"update":{...}}`, one document or one per line), or a capture's
 * timeline of snapshots and frames. {@link parseMapInput} checks the shape
 * (not what is inside a step: the tracker judges that, step by step),
 * {@link mapInputConversation} finds the conversation it names, and
 * {@link mapInputEvents} feeds it to a tracker a page at a time.
 *
 * Pure: text in, events out; reading files and writing lines is the CLI's.
 */
import { asString, isObject } from "../protocol/json.js";
import type { StreamUpdate } from "../protocol/wire-schemas.js";
import type { MapperEvent } from "./events.js";
import type { TrajectoryTracker } from "./tracker-api.js";

/** Steps per page: a snapshot is mapped as consecutive pages, which the tracker treats exactly like one. */
export const MAP_PAGE_STEPS = 256;

/** One entry of a capture's timeline, in time order. */
export type MapInputItem = { kind: "snapshot"; steps: unknown[] } | { kind: "frame"; update: StreamUpdate };

export type MapInput =
  | { kind: "steps"; steps: unknown[] }
  | { kind: "snapshot"; steps: unknown[] }
  | { kind: "frames"; updates: StreamUpdate[] }
  | { kind: "capture"; items: readonly MapInputItem[]; conversationId: string | undefined };

/** Input that is none of the shapes `map` reads; the message is one line naming where. */
export class MapInputError extends Error {
  override readonly name = "MapInputError";
}

/** Parses the whole input; throws {@link MapInputError} with a one-line reason. */
export function parseMapInput(text: string): MapInput {
  if (text.trim() === "") throw new MapInputError("the input is empty");
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    if (hasSecondLine(text)) return fromLines(text);
    throw new MapInputError(`invalid JSON (${(error as Error).message})`);
  }
  return fromDocument(doc);
}

function fromDocument(doc: unknown): MapInput {
  if (Array.isArray(doc)) {
    requireSomeStep(doc, "the array");
    return { kind: "steps", steps: doc };
  }
  if (isObject(doc)) {
    const steps = doc["steps"];
    if (Array.isArray(steps)) {
      requireSomeStep(steps, '"steps"');
      return { kind: "snapshot", steps };
    }
    if ("update" in doc) return { kind: "frames", updates: [frameUpdate(doc, "the frame")] };
    if (typeof doc["type"] === "string") return { kind: "steps", steps: [doc] };
  }
  throw new MapInputError('the input is not a step, an array of steps, a {"steps":[...]} response or stream frames');
}

/** A list with entries but not one object in it is not steps at all (the tracker skips single bad ones). */
function requireSomeStep(list: readonly unknown[], what: string): void {
  if (list.length > 0 && !list.some(isObject)) throw new MapInputError(`position 0: ${what} holds no step objects`);
}

function frameUpdate(frame: unknown, where: string): StreamUpdate {
  if (!isObject(frame) || !isObject(frame["update"])) throw new MapInputError(`${where}: expected a stream frame {"update":{...}}`);
  return frame["update"] as StreamUpdate;
}

function fromLines(text: string): MapInput {
  const updates: StreamUpdate[] = [];
  let lineNumber = 0;
  for (const line of text.split("\n")) {
    lineNumber++;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new MapInputError(`line ${lineNumber}: invalid JSON (${(error as Error).message})`);
    }
    updates.push(frameUpdate(value, `line ${lineNumber}`));
  }
  return { kind: "frames", updates };
}

function hasSecondLine(text: string): boolean {
  const first = text.indexOf("\n");
  return first >= 0 && text.slice(first + 1).trim() !== "";
}

/** The conversation a step names (`metadata.sourceTrajectoryStepInfo.cascadeId`), if any. */
export function stepConversation(step: unknown): string | undefined {
  if (!isObject(step)) return undefined;
  const metadata = step["metadata"];
  const info = isObject(metadata) ? metadata["sourceTrajectoryStepInfo"] : undefined;
  const id = isObject(info) ? asString(info["cascadeId"]) : undefined;
  return id === "" ? undefined : id;
}

function firstConversation(steps: readonly unknown[]): string | undefined {
  for (const step of steps) {
    const id = stepConversation(step);
    if (id !== undefined) return id;
  }
  return undefined;
}

/** The conversation the input names: a capture's own, a frame's, or the first step's that names one. */
export function mapInputConversation(input: MapInput): string | undefined {
  if (input.kind === "capture") {
    if (input.conversationId !== undefined) return input.conversationId;
    return (
      mapInputConversation({ kind: "frames", updates: input.items.flatMap((item) => (item.kind === "frame" ? [item.update] : [])) }) ??
      firstConversation(input.items.flatMap((item) => (item.kind === "snapshot" ? item.steps : [])))
    );
  }
  if (input.kind !== "frames") return firstConversation(input.steps);
  for (const update of input.updates) {
    const id = asString(update.conversationId);
    if (id !== undefined && id !== "") return id;
    const main = update.mainTrajectoryUpdate;
    const stepsUpdate = isObject(main) ? main["stepsUpdate"] : undefined;
    const steps = isObject(stepsUpdate) ? stepsUpdate["steps"] : undefined;
    const found = Array.isArray(steps) ? firstConversation(steps) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The tracker's events, a batch at a time. A snapshot goes in as consecutive
 * pages of {@link MAP_PAGE_STEPS} (`stepOffset`); a capture item by item, in
 * its time order.
 */
export function* mapInputEvents(input: MapInput, tracker: TrajectoryTracker): Generator<MapperEvent[]> {
  if (input.kind === "capture") {
    for (const item of input.items)
      yield item.kind === "frame" ? tracker.applyStreamUpdate(item.update) : tracker.applySnapshot({ steps: item.steps, stepOffset: 0 });
    return;
  }
  if (input.kind === "frames") {
    for (const update of input.updates) yield tracker.applyStreamUpdate(update);
    return;
  }
  for (let at = 0; at < input.steps.length; at += MAP_PAGE_STEPS) {
    const page = input.steps.slice(at, at + MAP_PAGE_STEPS);
    yield input.kind === "snapshot" ? tracker.applySnapshot({ steps: page, stepOffset: at }) : tracker.applySteps(page);
  }
}
