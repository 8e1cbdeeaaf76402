/**
 * Reads a capture directory (`agy-bridge capture`, docs/capture.md) for the
 * replay. The simulator shares only `protocol/` with the client, so this is
 * its own reader of the documented format, not the recorder's: a bug in one
 * cannot hide the same bug in the other.
 *
 * A capture may come from someone else, so nothing in it is trusted: every
 * file read must be a regular file inside DIR — no symbolic link (to a file
 * or a folder), nothing whose real path leaves DIR — and sizes are bounded
 * ({@link REPLAY_LIMITS}) before anything is read. Its text is not made safe
 * for a terminal here: the screen's writer does that (`replay-screen.ts`).
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, type Stats } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
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

/** What a replayed capture may hold (docs/capture.md, "Replaying someone else's capture"). */
export interface ReplayLimits {
  /** Bytes of one steps/, summaries/ or stream/ file, or meta.json. */
  jsonFileBytes: number;
  /** Bytes of one screen. */
  screenBytes: number;
  /** Bytes of every file read, together. */
  totalBytes: number;
  /** Files in one folder. */
  filesPerFolder: number;
}

export const REPLAY_LIMITS: ReplayLimits = {
  jsonFileBytes: 64 * 1024 * 1024,
  screenBytes: 1024 * 1024,
  totalBytes: 512 * 1024 * 1024,
  filesPerFolder: 100_000,
};

/** The longest recorded time (ms) a replay waits for: what a timer can hold (24.8 days). */
const MAX_T = 2 ** 31 - 1;

export function loadReplayCapture(dir: string, limits: ReplayLimits = REPLAY_LIMITS): ReplayCapture {
  const fail = (what: string): AgyBridgeError =>
    new AgyBridgeError("invalid_argument", `cannot replay ${dir}: ${what}; a capture directory is what \`agy-bridge capture\` writes (docs/capture.md).`);
  let root: string;
  try {
    root = realpathSync(dir);
    if (!lstatSync(root).isDirectory()) throw fail("it is not a directory");
  } catch (error) {
    if (error instanceof AgyBridgeError) throw error;
    throw fail("it does not exist");
  }
  let total = 0;
  /** The entry `file` (relative to DIR) when it is a real file or folder inside DIR; undefined when absent. */
  const entry = (file: string, kind: "file" | "folder"): Stats | undefined => {
    let stats: Stats;
    try {
      stats = lstatSync(join(root, file));
    } catch {
      return undefined;
    }
    if (stats.isSymbolicLink())
      throw fail(`${file} is a symbolic link; a capture holds only its own files, so replay refuses links (copy the file in instead)`);
    if (kind === "file" ? !stats.isFile() : !stats.isDirectory()) throw fail(`${file} is not a ${kind === "file" ? "regular file" : "folder"}`);
    const real = realpathSync(join(root, file));
    const inside = relative(root, real);
    if (inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) throw fail(`${file} lies outside the capture directory`);
    return stats;
  };
  const readText = (file: string, maxBytes: number): string => {
    const stats = entry(file, "file") as Stats;
    if (stats.size > maxBytes) throw fail(`${file} is ${stats.size} bytes, more than the ${maxBytes} a replay reads from one such file`);
    total += stats.size;
    if (total > limits.totalBytes) throw fail(`its files add up to more than the ${limits.totalBytes} bytes a replay reads`);
    return readFileSync(join(root, file), "utf8");
  };
  const names = (sub: string): string[] => {
    if (entry(sub, "folder") === undefined) return [];
    const all = readdirSync(join(root, sub)).sort();
    if (all.length > limits.filesPerFolder) throw fail(`${sub}/ holds ${all.length} files, more than the ${limits.filesPerFolder} a replay reads`);
    return all;
  };
  const time = (text: string, file: string): number => {
    const t = Number(text);
    if (!(t <= MAX_T)) throw fail(`${file} is timed ${text} ms after the start, later than a replay can wait (${MAX_T} ms)`);
    return t;
  };
  const readJson = (file: string): unknown => {
    const text = readText(file, limits.jsonFileBytes);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw fail(`${file} is not JSON (${(error as Error).message})`);
    }
  };
  const timed = (sub: string): Array<{ t: number; body: JsonObject }> =>
    names(sub)
      .filter((n) => n.endsWith(".json"))
      .map((name) => {
        const match = /^[0-9]+-([0-9]+)\.json$/.exec(name);
        if (match === null) throw fail(`${sub}/${name} is not a NNNN-T.json answer`);
        const t = time(match[1] as string, `${sub}/${name}`);
        const body = readJson(`${sub}/${name}`);
        if (!isObject(body)) throw fail(`${sub}/${name} is not a NNNN-T.json answer`);
        return { t, body };
      })
      .sort((a, b) => a.t - b.t);
  const frames: ReplayCapture["frames"] = [];
  for (const name of names("stream").filter((n) => n.endsWith(".ndjson"))) {
    readText(`stream/${name}`, limits.jsonFileBytes)
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          throw fail(`stream/${name} line ${i + 1} is not JSON`);
        }
        if (!isObject(value) || typeof value["t"] !== "number" || !isObject(value["frame"]))
          throw fail(`stream/${name} line ${i + 1} is not {"t":…,"frame":{…}}`);
        frames.push({ t: time(String(value["t"]), `stream/${name} line ${i + 1}`), frame: value["frame"] });
      });
  }
  frames.sort((a, b) => a.t - b.t);
  const screens = names("screens").flatMap((name) => {
    const match = /^([0-9]+)-([a-z]+)\.txt$/.exec(name);
    if (match === null) return [];
    const t = time(match[1] as string, `screens/${name}`);
    return [{ t, state: match[2] as string, text: readText(`screens/${name}`, limits.screenBytes) }];
  });
  const meta = entry("meta.json", "file") === undefined ? {} : readJson("meta.json");
  const snapshots = timed("steps");
  const conversationId = (isObject(meta) ? asString(meta["conversationId"]) : undefined) || conversationOf(frames, snapshots);
  if (conversationId === undefined) throw fail("it names no conversation (no meta.json, and no frame or step carries an id)");
  if (snapshots.length === 0 && frames.length === 0) throw fail("it holds no steps/ and no stream/ frames");
  const version = isObject(meta) ? asString(meta["agyVersion"]) : undefined;
  return { conversationId, agyVersion: version === undefined || version === "" ? null : version, snapshots, frames, summaries: timed("summaries"), screens };
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
