/**
 * `npm run bench`: runs every `bench/*.bench.ts` suite (or those named on the
 * command line) and prints one markdown table per suite; `--quick` runs
 * every row with as few runs as it can (bench/harness.ts isQuick).
 */
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { formatTable, type BenchSuite } from "./harness.js";

const here = dirname(fileURLToPath(import.meta.url));
// `--quick`: every row with as few runs as it can (harness.ts isQuick), for CI; the rest name suites.
const quick = process.argv.includes("--quick");
if (quick) process.env["AGY_BRIDGE_BENCH_QUICK"] = "1";
const wanted = process.argv.slice(2).filter((a) => a !== "--quick");
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();

let missed = 0;
const began = performance.now();
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: BenchSuite };
  const started = performance.now();
  const rows = await mod.default.run();
  process.stdout.write(`${formatTable(mod.default.title, rows)}\n${file}: ${((performance.now() - started) / 1000).toFixed(1)} s\n\n`);
  missed += rows.filter((r) => r.met === false).length;
}
const total = ((performance.now() - began) / 1000).toFixed(0);
process.stdout.write(`node ${process.version}, ${files.length} suite(s)${quick ? " (--quick)" : ""} in ${total} s; ${missed} goal(s) missed\n`);
