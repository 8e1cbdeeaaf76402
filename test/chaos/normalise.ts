/**
 * What is defined to differ between two readings of the same conversation,
 * and nothing more. The rules are the ones the project already tests with:
 *
 * - `test/session/read-paths-diff.test.ts` (docs/events.md, "The same
 *   content whichever way it was read"): the live deltas, the session's
 *   `history_end` marker, `interaction_resolved.stepStatus` and `.response`
 *   (which version ended the wait), the catalog `displayName` on
 *   `model_changed`;
 * - `test/sim/personas.test.ts`: ids and times minted per run (every run
 *   starts its own simulator, so conversation ids, trajectory ids and the
 *   ids hashed from them, and timestamps, are new).
 *
 * Plus the one session diagnostic that reports the outage itself,
 * `connection_lost` (docs/events.md lists session diagnostics among what
 * depends on what was seen): a run with faults has outages, a clean run has
 * none. Every other diagnostic, and a `server_gone` status, stays in the log
 * and so fails the comparison.
 */
import type { MapperEvent } from "../../src/mapper/index.js";

const PER_RUN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
const PER_RUN_KEYS = new Set(["interactionId", "callId", "messageId", "agyToolCallId", "at", "timestamp"]);

export function normalise(log: readonly MapperEvent[]): string[] {
  return log
    .filter((e) => e.type !== "message_delta" && e.type !== "reasoning_delta" && e.type !== "history_end")
    .filter((e) => !(e.type === "diagnostic" && e.code === "connection_lost"))
    .map((e) => {
      let kept: object = e;
      if (e.type === "interaction_resolved") {
        const { stepStatus: _s, response: _r, ...rest } = e;
        kept = rest;
      } else if (e.type === "model_changed") {
        const { displayName: _d, ...rest } = e;
        kept = rest;
      }
      return JSON.stringify(kept, (key, value: unknown) => (PER_RUN_KEYS.has(key) ? "<per-run>" : value)).replace(PER_RUN, "<per-run>");
    });
}

/** The first position where two normalised logs differ, as two readable lines (undefined when identical). */
export function firstDifference(clean: readonly string[], faulted: readonly string[]): string | undefined {
  const n = Math.max(clean.length, faulted.length);
  for (let i = 0; i < n; i++) {
    if (clean[i] !== faulted[i]) return `event ${i}: clean ${clean[i] ?? "(none)"} / faulted ${faulted[i] ?? "(none)"}`;
  }
  return undefined;
}
