/**
 * Reads a capture directory back as one timeline: snapshots and stream frames
 * in the order they were recorded (by `t`; on a tie the frame first, as the
 * recorder reads a snapshot only after the frame that prompted it), plus the
 * screens and `meta.json`. A file that is not what the format says is an
 * `invalid_argument` error naming the file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { AgyBridgeError } from "../errors.js";
import { isObject } from "../protocol/json.js";
import type { StreamUpdate } from "../protocol/wire-schemas.js";
import { META_FILE, parseScreenName, SCREENS_DIR, STEPS_DIR, STREAM_DIR, timeOfSeqFile, type CaptureMeta } from "./capture-format.js";

export type TimelineItem = { t: number; kind: "snapshot"; steps: unknown[]; file: string } | { t: number; kind: "frame"; update: StreamUpdate; file: string };

export interface CaptureTimeline {
  meta: Partial<CaptureMeta>;
  items: TimelineItem[];
  screens: Array<{ t: number; state: string; file: string; text: string }>;
}

/** True when `path` is a directory holding a capture (`meta.json`, `steps/` or `stream/`). */
export function isCaptureDir(path: string): boolean {
  try {
    return statSync(path).isDirectory() && [META_FILE, STEPS_DIR, STREAM_DIR].some((name) => existsSync(join(path, name)));
  } catch {
    return false;
  }
}

export function readCaptureDir(dir: string): CaptureTimeline {
  const bad = (file: string, why: string): AgyBridgeError =>
    new AgyBridgeError("invalid_argument", `${join(dir, file)} ${why}; a capture directory holds what docs/capture.md describes.`);
  const items: TimelineItem[] = [];
  for (const name of list(join(dir, STEPS_DIR)).filter((n) => n.endsWith(".json"))) {
    const file = `${STEPS_DIR}/${name}`;
    const t = timeOfSeqFile(name);
    if (t === undefined) throw bad(file, "is not named NNNN-T.json");
    const doc = parse(join(dir, file), () => bad(file, "is not JSON"));
    if (!isObject(doc)) throw bad(file, 'is not a {"steps":[…]} answer');
    const steps = doc["steps"] ?? [];
    if (!Array.isArray(steps)) throw bad(file, 'is not a {"steps":[…]} answer');
    items.push({ t, kind: "snapshot", steps, file });
  }
  for (const name of list(join(dir, STREAM_DIR)).filter((n) => n.endsWith(".ndjson"))) {
    const file = `${STREAM_DIR}/${name}`;
    readFileSync(join(dir, file), "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        const value = parse(line, () => bad(file, `line ${i + 1} is not JSON`), true);
        const frame = isObject(value) ? value["frame"] : undefined;
        const update = isObject(frame) ? frame["update"] : undefined;
        if (!isObject(value) || typeof value["t"] !== "number" || !isObject(update)) throw bad(file, `line ${i + 1} is not {"t":…,"frame":{"update":{…}}}`);
        items.push({ t: value["t"], kind: "frame", update: update as StreamUpdate, file });
      });
  }
  // Stable: within one source the file order stands; across sources, time, and frames before snapshots on a tie.
  items.sort((a, b) => a.t - b.t || (a.kind === b.kind ? 0 : a.kind === "frame" ? -1 : 1));
  const screens = list(join(dir, SCREENS_DIR)).flatMap((name) => {
    const parsed = parseScreenName(name);
    return parsed === undefined ? [] : [{ ...parsed, file: `${SCREENS_DIR}/${name}`, text: readFileSync(join(dir, SCREENS_DIR, name), "utf8") }];
  });
  const metaPath = join(dir, META_FILE);
  const meta = existsSync(metaPath) ? parse(metaPath, () => bad(META_FILE, "is not JSON")) : {};
  return { meta: isObject(meta) ? (meta as Partial<CaptureMeta>) : {}, items, screens };
}

function list(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function parse(pathOrText: string, fail: () => AgyBridgeError, isText = false): unknown {
  try {
    return JSON.parse(isText ? pathOrText : readFileSync(pathOrText, "utf8"));
  } catch {
    throw fail();
  }
}
