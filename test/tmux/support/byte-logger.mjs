// A raw-mode terminal program for tmux tests: turns bracketed paste on, then
// appends every byte it receives to the file named by argv[2], unchanged.
// The footer line makes it look ready to a driver waiting for agy's markers.
import { appendFileSync, writeFileSync } from "node:fs";

const log = process.argv[2];
if (log === undefined) throw new Error("usage: byte-logger.mjs <log-file>");
writeFileSync(log, "");
process.stdin.setRawMode(true);
process.stdin.on("data", (chunk) => appendFileSync(log, chunk));
process.stdin.resume();
process.stdout.write("\x1b[?2004h");
process.stdout.write("byte logger · ? for shortcuts\r\n");
