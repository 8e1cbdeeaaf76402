/**
 * A `--import` module that records every module a Node process loads, for
 * test/cli/module-loading.test.ts and bench/cli-startup.bench.ts:
 *
 *   node --import ./record-modules.mjs dist/cli/bin.js --help
 *
 * with RECORD_MODULES_FILE naming the file to write. ES modules are seen by
 * a resolve hook (which runs in the loader's own thread and appends each
 * resolved URL as it is resolved); CommonJS modules loaded by `require`
 * inside packages never pass that hook on Node 20, so the process also
 * appends the keys of the CommonJS cache when it exits. One URL or path a
 * line; duplicates are possible and mean nothing.
 */
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const file = process.env.RECORD_MODULES_FILE;
if (file === undefined || file === "") {
  throw new Error("record-modules.mjs: set RECORD_MODULES_FILE to the file that receives the module list");
}

register("./record-modules-hooks.mjs", import.meta.url, { data: { file } });

const require = createRequire(import.meta.url);
process.on("exit", () => {
  const paths = Object.keys(require.cache);
  if (paths.length > 0) appendFileSync(file, `${paths.join("\n")}\n`);
});
