/**
 * Events stay byte-identical (issue 23): every step fixture, every real
 * capture, a capture-built history and every simulator scenario (played live
 * on a manual clock and replayed) gives exactly the events pinned in
 * `pinned-events.ndjson`. A change to the tracker's internals must not change
 * one byte; a deliberate change to the events rewrites the file with
 * `npx tsx test/mapper/support/write-pinned-events.ts` and says why.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { PINNED_FILE } from "./support/pinned-file.js";
import { allPinnedRuns, fixedIds, serializeRun } from "./support/pinned-runs.js";

const pinned = new Map<string, string>();
const current = new Map<string, string>();

beforeAll(async () => {
  for (const line of readFileSync(PINNED_FILE, "utf8").split("\n")) {
    if (line !== "") pinned.set((JSON.parse(line) as { run: string }).run, line);
  }
  const keep = fixedIds();
  for (const run of await allPinnedRuns()) current.set(run.name, serializeRun(run, keep));
});

describe("the pinned event logs", () => {
  it("covers the same runs as the pinned file, with events in most of them", () => {
    expect([...current.keys()]).toEqual([...pinned.keys()]);
    expect(pinned.size).toBeGreaterThan(100);
    const withEvents = [...pinned.values()].filter((line) => !line.endsWith('"events":[]}')).length;
    expect(withEvents).toBeGreaterThan(pinned.size * 0.8);
  });

  it("gives every run's events byte for byte as pinned", () => {
    const changed = [...current].filter(([name, line]) => pinned.get(name) !== line).map(([name]) => name);
    expect(changed, `runs whose events changed: ${changed.join("; ")}`).toEqual([]);
  });
});
