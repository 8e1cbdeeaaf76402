#!/usr/bin/env node
import { main } from "./main.js";
import { terminalText } from "./terminal-text.js";

const controller = new AbortController();
// The first signal asks the command to stop and clean up. Ctrl-C reaches every
// process of the foreground group and a runner such as tsx relays it again, so
// a repeat within two seconds is the same request; a later one means "now".
let firstSignalAt: number | undefined;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      controller.abort(new Error(`received ${sig}`));
    } else if (Date.now() - firstSignalAt > 2000) {
      process.exit(130);
    }
  });
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
    // Whatever escaped a command: its message may quote agy's text, so it is shown safe.
    process.stderr.write(`${terminalText(`agy-bridge: ${error instanceof Error ? error.message : String(error)}`)}\n`);
    process.exitCode = 1;
  },
);
