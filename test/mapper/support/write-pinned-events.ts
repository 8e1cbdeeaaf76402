/**
 * Writes the pinned event logs (`npx tsx test/mapper/support/write-pinned-events.ts [file]`):
 * run only when events are meant to change, and say why in the commit.
 */
import { writeFileSync } from "node:fs";
import { allPinnedRuns, fixedIds, serializeRun } from "./pinned-runs.js";
import { PINNED_FILE } from "./pinned-file.js";

const target = process.argv[2] ?? PINNED_FILE;
const keep = fixedIds();
const runs = await allPinnedRuns();
writeFileSync(target, `${runs.map((run) => serializeRun(run, keep)).join("\n")}\n`);
process.stdout.write(`${runs.length} runs, ${runs.reduce((n, r) => n + r.events.length, 0)} events written to ${target}\n`);
