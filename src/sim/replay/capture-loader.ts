/**
 * Reads a capture directory (`agy-bridge capture`, docs/capture.md) for the
 * replay. The simulator shares only `protocol/` with the client, so this is
 * its own reader of the documented format, not the recorder's: a bug in one
 * cannot hide the same bug in the other.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgyBridgeError } from "../../errors.js";
import { asString, isObject, type JsonObject } from "../../protocol/json.js";

export interface ReplayCapture {
  conversationId: string;
  /** agy's version as recorded, or null. */
  agyVersion: string | null;
  /** GetCascadeTrajectorySteps answers by time (ms since the capture started). */
  snapshots: Array<{ t: number; body: JsonObject }>;
  /** Stream frames (`{"update":…}`) by time, every connection's merged. */
  frames: Array<{ t: number; frame: JsonObject }>;
  /** GetAllCascadeTrajectories answers by time. */
  summaries: Array<{ t: number; body: JsonObject }>;
  /** Screens by time, as `capture-pane` printed them. */
  screens: Array<{ t: number; state: string; text: string }>;
}

export function loadReplayCapture(dir: string): ReplayCapture {
  const fail = (what: string): AgyBridgeError =>
    new AgyBridgeError("invalid_argument", `cannot replay ${dir}: ${what}; a capture directory is what \`agy-bridge capture\` writes (docs/capture.md).`);
  if (!existsSync(dir)) throw fail("it does not exist");
  const readJson = (file: string): unknown => {
    try {
      return JSON.parse(readFileSync(join(dir, file), "utf8"));
    } catch (error) {
      throw fail(`${file} is not JSON (${(error as Error).message})`);
    }
  };
  const timed = (sub: string): Array<{ t: number; body: JsonObject }> =>
    names(join(dir, sub))
      .filter((n) => n.endsWith(".json"))
      .map((name) => {
        const match = /^[0-9]+-([0-9]+)\.json$/.exec(name);
        const body = readJson(`${sub}/${name}`);
        if (match === null || !isObject(body)) throw fail(`${sub}/${name} is not a NNNN-T.json answer`);
        return { t: Number(match[1]), body };
      })
      .sort((a, b) => a.t - b.t);
  const frames: ReplayCapture["frames"] = [];
  for (const name of names(join(dir, "stream")).filter((n) => n.endsWith(".ndjson"))) {
    readFileSync(join(dir, "stream", name), "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          throw fail(`stream/${name} line ${i + 1} is not JSON`);
        }
        if (!isObject(value) || typeof value["t"] !== "number" || !isObject(value["frame"])) throw fail(`stream/${name} line ${i + 1} is not {"t":…,"frame":{…}}`);
        frames.push({ t: value["t"], frame: value["frame"] });
      });
  }
  frames.sort((a, b) => a.t - b.t);
  const screens = names(join(dir, "screens")).flatMap((name) => {
    const match = /^([0-9]+)-([a-z]+)\.txt$/.exec(name);
    return match === null ? [] : [{ t: Number(match[1]), state: match[2] as string, text: readFileSync(join(dir, "screens", name), "utf8") }];
  });
  const meta = existsSync(join(dir, "meta.json")) ? readJson("meta.json") : {};
  const snapshots = timed("steps");
  const conversationId = (isObject(meta) ? asString(meta["conversationId"]) : undefined) || conversationOf(frames, snapshots);
  if (conversationId === undefined) throw fail("it names no conversation (no meta.json, and no frame or step carries an id)");
  if (snapshots.length === 0 && frames.length === 0) throw fail("it holds no steps/ and no stream/ frames");
  const version = isObject(meta) ? asString(meta["agyVersion"]) : undefined;
  return { conversationId, agyVersion: version === undefined || version === "" ? null : version, snapshots, frames, summaries: timed("summaries"), screens };
}

function names(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function conversationOf(frames: ReplayCapture["frames"], snapshots: ReplayCapture["snapshots"]): string | undefined {
  for (const { frame } of frames) {
    const id = isObject(frame["update"]) ? asString(frame["update"]["conversationId"]) : undefined;
    if (id) return id;
  }
  for (const { body } of snapshots) {
    const steps = Array.isArray(body["steps"]) ? body["steps"] : [];
    for (const step of steps) {
      const metadata = isObject(step) ? step["metadata"] : undefined;
      const info = isObject(metadata) ? metadata["sourceTrajectoryStepInfo"] : undefined;
      const id = isObject(info) ? asString(info["cascadeId"]) : undefined;
      if (id) return id;
    }
  }
  return undefined;
}
