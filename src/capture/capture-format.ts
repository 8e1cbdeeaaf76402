/**
 * The capture directory format (docs/capture.md), shared by the recorder,
 * `agy-bridge map DIR` and (by its own reader, sim/ imports nothing of ours
 * but protocol/) `agy-bridge sim --replay DIR`:
 *
 *   meta.json            {agyVersion, platform, capturedAt, agyBridgeVersion, listeners, conversationId}
 *   steps/NNNN-T.json    one GetCascadeTrajectorySteps answer {"steps":[…]} per snapshot read (poll projection)
 *   stream/NNNN.ndjson   one file per stream connection, a line per frame: {"t":T,"frame":{"update":{…}}}
 *   summaries/NNNN-T.json one GetAllCascadeTrajectories answer per read
 *   screens/T-STATE.txt  one capture-pane text per screen, STATE from the screen model
 *   answers.ndjson       every interaction resolved during the capture: {"t":T, interactionId, stepIndex, kind, outcome, …}
 *
 * T is milliseconds since the capture started, zero-padded to 8 digits in
 * file names so that names sort in time order.
 */

/** How a listener answered: `rpc` when it answered `Heartbeat` with 200, else `silent`. */
export type ListenerRole = "rpc" | "silent";

export interface CaptureListener {
  role: ListenerRole;
  transport: "tls" | "plain" | "unknown";
  port: number;
}

export interface CaptureMeta {
  agyVersion: string | null;
  platform: string;
  capturedAt: string;
  agyBridgeVersion: string;
  listeners: CaptureListener[];
  /** The conversation's placeholder (the real id when redaction is off). */
  conversationId: string;
}

export const META_FILE = "meta.json";
export const STEPS_DIR = "steps";
export const STREAM_DIR = "stream";
export const SUMMARIES_DIR = "summaries";
export const SCREENS_DIR = "screens";
export const ANSWERS_FILE = "answers.ndjson";

/** `t` as it appears in file names. */
export function timeLabel(t: number): string {
  return String(Math.max(0, Math.round(t))).padStart(8, "0");
}

export function seqLabel(n: number): string {
  return String(n).padStart(4, "0");
}

/** `steps/0003-00001250.json` → 1250; undefined for a name of another shape. */
export function timeOfSeqFile(name: string): number | undefined {
  const match = /^[0-9]+-([0-9]+)\.json$/.exec(name);
  return match === null ? undefined : Number(match[1]);
}

/** `screens/00001250-prompt.txt` → {t: 1250, state: "prompt"}. */
export function parseScreenName(name: string): { t: number; state: string } | undefined {
  const match = /^([0-9]+)-([a-z]+)\.txt$/.exec(name);
  return match === null ? undefined : { t: Number(match[1]), state: match[2] as string };
}
