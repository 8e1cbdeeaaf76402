/**
 * The facts of docs/spike-notes.md that a live agy can confirm or contradict
 * without being changed, each judged from the probes' observations. Ids are
 * the section (`3.4`), with `#N` for the Nth row of that section's table
 * when a section has several checked facts (§13 keeps its own fact numbers:
 * `13#2`). Statements say what the notes say, in the version they say it
 * for; a fact recorded only for newer builds (`since`) that this agy does
 * not show is contradicted only when agy's version is known to be that new,
 * else not checked (an older agy is not expected to show it).
 */
import type { Observations, Probe } from "./compat-probes.js";
import { isNewerThanProbed, NEWEST_PROBED_AGY } from "../discovery/agy-version.js";

export type FactStatus = "confirmed" | "contradicted" | "not_checked";

export interface FactResult {
  id: string;
  statement: string;
  status: FactStatus;
  seen: string | null;
}

interface Verdict {
  status: FactStatus;
  seen: string | null;
}

interface Fact {
  id: string;
  statement: string;
  /** Recorded only for builds from this version on (spike-notes §10). */
  since?: string;
  check(obs: Observations): Verdict;
}

const confirmed = (seen: string | null = null): Verdict => ({ status: "confirmed", seen });
const contradicted = (seen: string): Verdict => ({ status: "contradicted", seen });
const notChecked = (seen: string | null = null): Verdict => ({ status: "not_checked", seen });
const NO_CONVERSATION = "no conversation to read (type a first turn in agy, or pass --conversation ID)";

function failed(probe: Probe<unknown>): string {
  return probe.ok ? "answered" : `${probe.status === undefined ? "failed" : `HTTP ${probe.status}`}: ${probe.message}`;
}

function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Keys of `value` (dotted below `prefix`) that are not in `known`. */
function extraKeys(value: unknown, known: readonly string[], prefix: string): string[] {
  return Object.keys(obj(value) ?? {})
    .filter((k) => !known.includes(k))
    .map((k) => `${prefix}${k}`);
}

const STEP_UPDATE_KEYS = ["indices", "steps", "totalLength"];
const UPDATE_KEYS = ["conversationId", "trajectoryId", "status", "mainTrajectoryUpdate"];

export const FACTS: readonly Fact[] = [
  {
    id: "1.1",
    statement: "agy hosts its Connect-RPC server on a loopback TLS listener (self-signed certificate) that answers Heartbeat with 200.",
    check(obs) {
      const listeners = obs.listeners.map((l) => `${l.port} ${l.transport} ${l.role === "rpc" ? "answers Heartbeat" : "does not answer Heartbeat"}`).join("; ");
      if (obs.listeners.some((l) => l.transport === "tls" && l.role === "rpc")) return confirmed(listeners);
      if (obs.listeners.length <= 1 && obs.transport === "plain")
        return notChecked(`only the plain URL given was probed (${listeners}); without --url discovery sees every listener`);
      return contradicted(listeners === "" ? "no listener was found" : listeners);
    },
  },
  {
    id: "10.2",
    since: "1.1",
    statement: "agy holds two loopback listeners, one TLS and one plain HTTP, and both answer Heartbeat (agy 1.1.5; 1.0.10's second port did not).",
    check(obs) {
      const listeners = obs.listeners.map((l) => `${l.port} ${l.transport} ${l.role === "rpc" ? "answers" : "silent"}`).join("; ");
      const rpc = obs.listeners.filter((l) => l.role === "rpc");
      if (rpc.some((l) => l.transport === "tls") && rpc.some((l) => l.transport === "plain")) return confirmed(listeners);
      if (obs.listeners.length <= 1) return notChecked(`one listener known (${listeners}): discovery, not --url, sees them all`);
      return contradicted(listeners);
    },
  },
  {
    id: "10.3#2",
    statement: "agy 1.0.x answers calls without a CSRF token: no x-codeium-csrf-token header is needed.",
    check(obs) {
      const bare = obs.heartbeatWithoutToken ?? obs.heartbeat;
      if (bare.ok) return confirmed("Heartbeat without the header: 200");
      if (!bare.ok && bare.status === 401)
        return contradicted(`Heartbeat without the header: HTTP 401 (${bare.message}); this agy wants agy's CSRF token on every call (§10.3)`);
      return notChecked(`Heartbeat ${failed(bare)}`);
    },
  },
  {
    id: "3.1",
    statement: "Heartbeat {} answers 200.",
    check: (obs) => (obs.heartbeat.ok ? confirmed(`200 in ${obs.heartbeat.ms} ms`) : contradicted(`Heartbeat ${failed(obs.heartbeat)}`)),
  },
  {
    id: "3.2",
    statement: "GetConversationMetadata {conversationId} answers {metadata:{rootConversationId}} echoing the id, and nothing more (agy 1.0.10).",
    check(obs) {
      if (obs.metadata === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.metadata.ok) return contradicted(`GetConversationMetadata ${failed(obs.metadata)}`);
      const answer = obj(obs.metadata.value);
      const metadata = obj(answer?.["metadata"]);
      if (metadata?.["rootConversationId"] !== obs.conversationId) return contradicted("metadata.rootConversationId does not echo the conversation id");
      const extras = [...extraKeys(answer, ["metadata"], ""), ...extraKeys(metadata, ["rootConversationId"], "metadata.")];
      return extras.length === 0
        ? confirmed("metadata.rootConversationId echoes the id")
        : contradicted(`also ${extras.join(", ")} (newer builds add the workspaces, §10.4)`);
    },
  },
  {
    id: "3.3#1",
    statement: "GetCascadeTrajectorySteps {cascadeId} answers {steps:[…]}, each step an object with a type and a status.",
    check(obs) {
      if (obs.steps === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.steps.ok) return contradicted(`GetCascadeTrajectorySteps ${failed(obs.steps)}`);
      const bad = obs.steps.value.findIndex((s) => typeof obj(s)?.["type"] !== "string" || typeof obj(s)?.["status"] !== "string");
      return bad === -1 ? confirmed(`${obs.steps.value.length} steps in ${obs.steps.ms} ms`) : contradicted(`step ${bad} has no type or status`);
    },
  },
  {
    id: "10.4#3",
    since: "1.1",
    statement: "GetCascadeTrajectorySteps takes stepOffset: item i of the answer is step stepOffset + i.",
    check(obs) {
      if (obs.steps === undefined) return notChecked(NO_CONVERSATION);
      const probe = obs.stepsFromOffset;
      if (probe === undefined || probe.offset === undefined) return notChecked("the conversation has fewer than two steps");
      if (!probe.ok) return contradicted(`with stepOffset ${probe.offset}: ${failed(probe)}`);
      const all = obs.steps.ok ? obs.steps.value : [];
      const same = probe.value.length === all.length - probe.offset && JSON.stringify(probe.value[0]) === JSON.stringify(all[probe.offset]);
      return same
        ? confirmed(`stepOffset ${probe.offset} → ${probe.value.length} step(s), the last one`)
        : contradicted(`stepOffset ${probe.offset} → ${probe.value.length} steps (ignored?)`);
    },
  },
  {
    id: "10.4#4",
    since: "1.1",
    statement: "GetCascadeTrajectory {cascadeId} answers {trajectory:{trajectoryId, cascadeId, steps}, status, numTotalSteps} (newer builds).",
    check(obs) {
      if (obs.trajectory === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.trajectory.ok) return contradicted(`GetCascadeTrajectory ${failed(obs.trajectory)}`);
      const trajectory = obj(obj(obs.trajectory.value)?.["trajectory"]);
      return trajectory !== undefined && typeof trajectory["trajectoryId"] === "string"
        ? confirmed("served")
        : contradicted("answered without trajectory.trajectoryId");
    },
  },
  {
    id: "1.6#5",
    statement: "A method this agy does not know answers HTTP 404.",
    check(obs) {
      const unknown = obs.trajectory;
      if (unknown === undefined) return notChecked(NO_CONVERSATION);
      if (!unknown.ok && unknown.status === 404) return confirmed("GetCascadeTrajectory, which this agy does not serve, answered 404");
      return notChecked("every method probed is served here, so none showed what an unknown one answers");
    },
  },
  {
    id: "1.5",
    statement: "StreamAgentStateUpdates takes one enveloped request and answers Connect frames: a flag byte, a 4-byte length, JSON {update:{…}}.",
    check(obs) {
      if (obs.firstFrame === undefined) return notChecked(NO_CONVERSATION);
      return obs.firstFrame.ok ? confirmed(`first data frame after ${obs.firstFrame.ms} ms`) : contradicted(`stream: ${failed(obs.firstFrame)}`);
    },
  },
  {
    id: "3.4#2",
    statement:
      "Stream data frames are {update:{conversationId, trajectoryId, status, mainTrajectoryUpdate:{stepsUpdate:{indices?, steps, totalLength?}}}}, nothing more (agy 1.0.10).",
    check(obs) {
      if (obs.firstFrame === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.firstFrame.ok) return notChecked("no frame was read");
      const update = obj(obs.firstFrame.value);
      const main = obj(update?.["mainTrajectoryUpdate"]);
      if (update?.["conversationId"] !== obs.conversationId) return contradicted("update.conversationId is not the conversation's");
      const extras = [
        ...extraKeys(update, UPDATE_KEYS, "update."),
        ...extraKeys(main, ["stepsUpdate"], "update.mainTrajectoryUpdate."),
        ...extraKeys(main?.["stepsUpdate"], STEP_UPDATE_KEYS, "update.mainTrajectoryUpdate.stepsUpdate."),
      ];
      return extras.length === 0 ? confirmed("only the recorded fields") : contradicted(`also ${extras.join(", ")} (§10.5 records these for agy 1.2.x)`);
    },
  },
  {
    id: "3.4#3",
    statement: "The first frame after connecting replays the conversation's existing steps.",
    check(obs) {
      if (obs.firstFrame === undefined || obs.steps === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.firstFrame.ok || !obs.steps.ok) return notChecked("no frame or no snapshot was read");
      const steps = obj(obj(obj(obs.firstFrame.value)?.["mainTrajectoryUpdate"])?.["stepsUpdate"])?.["steps"];
      const count = Array.isArray(steps) ? steps.length : 0;
      if (obs.steps.value.length === 0) return notChecked("the conversation has no steps yet");
      return count === obs.steps.value.length
        ? confirmed(`${count} steps replayed`)
        : contradicted(`the first frame carried ${count} of ${obs.steps.value.length} steps`);
    },
  },
  {
    id: "10.5#3",
    since: "1.1",
    statement: "stepsUpdate.indices[i] is the index of steps[i], and totalLength is the number of steps.",
    check(obs) {
      if (obs.firstFrame === undefined || obs.steps === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.firstFrame.ok || !obs.steps.ok) return notChecked("no frame or no snapshot was read");
      const update = obj(obj(obj(obs.firstFrame.value)?.["mainTrajectoryUpdate"])?.["stepsUpdate"]) ?? {};
      const steps = Array.isArray(update["steps"]) ? update["steps"] : [];
      if (steps.length === 0) return notChecked("the first frame carried no steps");
      const indices = update["indices"];
      if (!Array.isArray(indices)) return contradicted("no indices");
      if (indices.length !== steps.length) return contradicted(`${indices.length} indices for ${steps.length} steps`);
      const total = Number(update["totalLength"]);
      return total === obs.steps.value.length
        ? confirmed(`indices 0..${indices.length - 1}, totalLength ${total}`)
        : contradicted(`totalLength ${String(update["totalLength"])} for ${obs.steps.value.length} steps`);
    },
  },
  {
    id: "3.4#5",
    statement: "Stream frames carry the low-fidelity projection: no metadata.internalMetadata and no plannerResponse.toolCalls.",
    check(obs) {
      if (obs.firstFrame === undefined) return notChecked(NO_CONVERSATION);
      if (!obs.firstFrame.ok) return notChecked("no frame was read");
      const steps = obj(obj(obj(obs.firstFrame.value)?.["mainTrajectoryUpdate"])?.["stepsUpdate"])?.["steps"];
      if (!Array.isArray(steps) || steps.length === 0) return notChecked("the first frame carried no steps");
      const high = steps.filter(
        (s) => obj(obj(s)?.["metadata"])?.["internalMetadata"] !== undefined || obj(obj(s)?.["plannerResponse"])?.["toolCalls"] !== undefined,
      ).length;
      return high === 0
        ? confirmed(`${steps.length} steps, none with poll-only fields`)
        : contradicted(`${high} of ${steps.length} streamed steps carry poll-only fields`);
    },
  },
  {
    id: "3.11#1",
    statement: "GetAllCascadeTrajectories {} answers trajectorySummaries keyed by conversation id, each with its trajectoryId and run status.",
    check(obs) {
      if (!obs.summaries.ok) return contradicted(`GetAllCascadeTrajectories ${failed(obs.summaries)}`);
      const summaries = obj(obj(obs.summaries.value)?.["trajectorySummaries"]) ?? {};
      if (obs.conversationId === null) return notChecked(`summaries: ${Object.keys(summaries).length}; ${NO_CONVERSATION}`);
      const mine = obj(summaries[obs.conversationId]);
      if (mine === undefined) return contradicted(`the conversation is not among the ${Object.keys(summaries).length} summaries`);
      const missing = ["trajectoryId", "status"].filter((k) => mine[k] === undefined);
      return missing.length === 0 ? confirmed(`summaries: ${Object.keys(summaries).length}`) : contradicted(`its summary has no ${missing.join(", ")}`);
    },
  },
  {
    id: "3.11#3",
    statement: "A summary's run status is CASCADE_RUN_STATUS_IDLE or CASCADE_RUN_STATUS_RUNNING.",
    check(obs) {
      if (!obs.summaries.ok || obs.conversationId === null) return notChecked(obs.conversationId === null ? NO_CONVERSATION : "no summaries were read");
      const status = obj(obj(obj(obs.summaries.value)?.["trajectorySummaries"])?.[obs.conversationId])?.["status"];
      if (status === "CASCADE_RUN_STATUS_IDLE" || status === "CASCADE_RUN_STATUS_RUNNING") return confirmed(String(status));
      return contradicted(`status ${JSON.stringify(status ?? null)}`);
    },
  },
  {
    id: "3.10",
    statement: "GetAvailableModels {} answers {response:{models:{…}, defaultAgentModelId}}.",
    check(obs) {
      if (!obs.models.ok) return contradicted(`GetAvailableModels ${failed(obs.models)}`);
      const models = obj(obj(obs.models.value)?.["models"]);
      return models !== undefined ? confirmed(`${Object.keys(models).length} models`) : contradicted("no response.models");
    },
  },
  {
    id: "13#2",
    statement: "agy's TUI shows a screen the screen model knows (a composer, a dialog, a picker), never one it reads as unknown.",
    check(obs) {
      if (obs.screen === undefined) return notChecked("no tmux pane known; pass --pane TARGET");
      if (!obs.screen.ok) return notChecked(`the pane could not be read: ${obs.screen.message}`);
      const m = obs.screen.value;
      const seen = `state ${m.state}, composer ${m.composer}, mode ${m.mode ?? "none"}, model ${m.model ?? "none"}${m.prompt === null ? "" : `, prompt ${m.prompt.kind} with ${m.prompt.options.length} options (${m.prompt.keys})`}`;
      return m.state === "unknown" ? contradicted(seen) : confirmed(seen);
    },
  },
];

/** How the report names the pane in a command a person runs. */
function paneOf(obs: Observations): string {
  return obs.paneLabel ?? "TARGET";
}

/** The prompt kinds that are one of agy's permission or question dialogs. */
const DIALOGS = new Set(["command", "file", "question", "amend"]);

/**
 * The facts of spike-notes §14 (agy versions and the 1.2.x keys): each read
 * passively where the screen, the process or RPC shows it; a fact that only
 * a key press could show is `not_checked` with the one thing a person can do
 * to check it. Nothing here presses a key.
 */
const VERSION_FACTS: readonly Fact[] = [
  {
    id: "14#2",
    statement: "agy's version can be read without starting agy: its children's environment names it (ANTIGRAVITY_LS_VERSION), else the banner in its pane.",
    check(obs) {
      const sim = obs.simulator === true ? "; this is agy-bridge's simulator, not a real agy" : "";
      if (obs.agyVersion !== null)
        return confirmed(
          `agy ${obs.agyVersion}, from its ${obs.agyVersionSource === "screen" ? "banner on screen" : obs.agyVersionSource === "server" ? "language server" : "process"}${sim}`,
        );
      return notChecked(
        `the version is unknown${sim}: run \`agy-bridge doctor\` to see what discovery read from the process, or pass --pane ${paneOf(obs)} so the banner can be read`,
      );
    },
  },
  {
    id: "14#4",
    statement: `This agy is no newer than the newest agy agy-bridge's facts describe (${NEWEST_PROBED_AGY}).`,
    check(obs) {
      if (obs.agyVersion === null) return notChecked("the version is unknown (see 14#2)");
      if (isNewerThanProbed(obs.agyVersion)) {
        return contradicted(
          `agy ${obs.agyVersion} is newer than probed: the facts describe agy up to ${NEWEST_PROBED_AGY}, so agy-bridge presses only the keys that are safe on every version`,
        );
      }
      return confirmed(`agy ${obs.agyVersion}`);
    },
  },
  {
    id: "14#6",
    since: "1.2",
    statement: "A typed digit answers a numbered agy menu at once, without Enter (agy 1.2.x).",
    check: (obs) =>
      notChecked(
        `only a key press shows it, and this report presses none: in a throwaway conversation, with a command approval open, press 4 alone in agy, then run \`agy-bridge screen --pane ${paneOf(obs)}\` — the dialog gone without Enter confirms it`,
      ),
  },
  {
    id: "14#7",
    since: "1.2",
    statement: "Escape at a command approval cancels the tool call and ends the turn; in Pending edit it does nothing (agy 1.2.x).",
    check: (obs) =>
      notChecked(
        `only a key press shows it, and this report presses none: in a throwaway conversation, at a command approval press Esc in agy, then run \`agy-bridge screen --pane ${paneOf(obs)}\` — "Interrupted · What should Antigravity CLI do instead?" above the composer confirms it`,
      ),
  },
  {
    id: "14#8",
    statement: "After an answer over RPC agy leaves its own dialog on screen (seen on 1.0.10; unknown on 1.2.x).",
    check(obs) {
      // With --url and no --pane, approve knows no pane, so it presses no key after its RPC answer.
      const again = `answer the prompt over RPC alone with \`agy-bridge approve --conversation ID --url URL\` (with --url and no --pane agy-bridge presses no key), then run \`agy-bridge doctor --report --conversation ID --pane ${paneOf(obs)}\` at once`;
      if (obs.screen === undefined) return notChecked(`no tmux pane known; pass --pane TARGET, then ${again}`);
      if (!obs.screen.ok) return notChecked(`the pane could not be read: ${obs.screen.message}`);
      const prompt = obs.screen.value.prompt;
      if (prompt === null || !DIALOGS.has(prompt.kind)) return notChecked(`no dialog on screen now: ${again}`);
      if (obs.steps === undefined || !obs.steps.ok)
        return notChecked(`a ${prompt.kind} dialog is on screen, but the conversation's steps were not read (pass --conversation ID)`);
      const waiting = obs.steps.value.filter((s) => String(obj(s)?.["status"] ?? "").endsWith("WAITING")).length;
      if (waiting > 0)
        return notChecked(
          `a ${prompt.kind} dialog is on screen and ${waiting} step${waiting === 1 ? "" : "s"} still wait${waiting === 1 ? "s" : ""} for it: ${again}`,
        );
      return confirmed(`a ${prompt.kind} dialog is on screen while no step of the conversation waits: it stayed after its step settled`);
    },
  },
  {
    id: "14#9",
    since: "1.1",
    statement: "LF (Ctrl-J) inserts a line break in agy's composer and does not submit; only CR submits.",
    check: (obs) =>
      notChecked(
        `only a key press shows it, and this report presses none: type a word into agy's empty composer, press Ctrl-J, then run \`agy-bridge screen --pane ${paneOf(obs)} --json\` — "composer": "draft" (no new turn) confirms it`,
      ),
  },
  {
    id: "14#10",
    since: "1.2",
    statement: "tmux reports agy's pane's command (#{pane_current_command}) as agy.",
    check(obs) {
      if (obs.paneCommand === undefined) return notChecked("no tmux pane known; pass --pane TARGET");
      if (!obs.paneCommand.ok) return notChecked(`tmux could not say: ${obs.paneCommand.message}`);
      const command = obs.paneCommand.value.trim();
      if (command === "agy") return confirmed("agy");
      return contradicted(`tmux reports ${JSON.stringify(command)}${obs.simulator === true ? " (this is agy-bridge's simulator)" : ""}`);
    },
  },
  {
    id: "14#11",
    statement: "`N task(s) · /tasks` on agy's status row counts background tasks and does not mean busy.",
    check(obs) {
      if (obs.screen === undefined) return notChecked("no tmux pane known; pass --pane TARGET");
      if (!obs.screen.ok) return notChecked(`the pane could not be read: ${obs.screen.message}`);
      const m = obs.screen.value;
      if (m.backgroundTasks === undefined) {
        return notChecked(
          `no background task on the status row now: run \`agy-bridge doctor --report --pane ${paneOf(obs)}\` again while one runs ("· 1 task(s) · /tasks")`,
        );
      }
      if (m.state === "busy") return notChecked(`${m.backgroundTasks} task(s) shown while agy also generates: run this again once the turn is over`);
      return confirmed(`${m.backgroundTasks} task(s) on the status row, screen ${m.state}`);
    },
  },
];

/** Judges every fact against `obs`. */
export function checkFacts(obs: Observations): FactResult[] {
  return [...FACTS, ...VERSION_FACTS].map((fact) => {
    let verdict = fact.check(obs);
    if (verdict.status === "contradicted" && fact.since !== undefined && !atLeast(obs.agyVersion, fact.since)) {
      verdict = notChecked(
        `${verdict.seen ?? ""}; recorded only for agy ${fact.since} and later, and this agy's version is ${obs.agyVersion === null ? "unknown" : `${obs.agyVersion}`}`,
      );
    }
    return { id: fact.id, statement: fact.statement, status: verdict.status, seen: verdict.seen };
  });
}

/** True when `version` (`1.2.4`, `cli-1.1.9`) is known and at least `floor`. */
export function atLeast(version: string | null, floor: string): boolean {
  const parts = (v: string): number[] | undefined => {
    const match = /([0-9]+)\.([0-9]+)(?:\.([0-9]+))?/.exec(v);
    return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  };
  const have = version === null ? undefined : parts(version);
  const want = parts(floor) as number[];
  if (have === undefined) return false;
  for (let i = 0; i < 3; i++) if ((have[i] as number) !== (want[i] as number)) return (have[i] as number) > (want[i] as number);
  return true;
}
