/**
 * Bundles the CLI into dist/bin/ (`npm run build` runs it after tsc): the
 * entry `agy-bridge.js` plus the chunks each command loads when it runs.
 *
 * Why: a command loads 60-90 of our own modules, and Node 20 reads, resolves,
 * links and compiles each one on every start (no compile cache before Node
 * 22). Bundled, `approve --url` took 0.88x the wall time of the unbundled
 * CLI (docs/scale.md, "Start-up"). Code splitting keeps every lazy
 * `import()` lazy, so a command still loads only what it uses; packages stay
 * outside the bundle, loaded from node_modules as before.
 *
 * The library (`dist/index.js` and the rest of dist/) is tsc's output and is
 * not touched. Files found beside a module at run time (the approval page,
 * the launcher source) are copied beside the chunks too.
 */
import { chmodSync, cpSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// `--outdir DIR` (tests): another directory two levels below the root, as dist/bin is.
const at = process.argv.indexOf("--outdir");
const outdir = join(root, at >= 0 ? (process.argv[at + 1] ?? "") : "dist/bin");
if (relative(root, outdir).split(sep).length !== 2) throw new Error(`bundle-cli: ${outdir} is not two levels below ${root}`);

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { "agy-bridge": "src/cli/bin.ts" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: true,
  sourcesContent: false,
  // Beside the entry, not below it: modules find files relative to themselves (package.json two levels up).
  chunkNames: "[name]-[hash]",
  logLevel: "warning",
});
cpSync(join(root, "src/server/approval-page.html"), join(outdir, "approval-page.html"));
cpSync(join(root, "src/sim/launcher/agy-launcher.c"), join(outdir, "agy-launcher.c"));
chmodSync(join(outdir, "agy-bridge.js"), 0o755);
