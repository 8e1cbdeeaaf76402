#!/usr/bin/env node
import { main } from "./main.js";

const controller = new AbortController();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => controller.abort(new Error(`received ${sig}`)));
}

main({
  argv: process.argv.slice(2),
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: controller.signal,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agy-bridge: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
