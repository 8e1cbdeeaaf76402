/**
 * Runs `agy-bridge sim --replay DIR [flags]` in a tmux pane with the real
 * terminal as stdin/stdout, and its stderr (the line naming the replay's
 * URLs) in the file named by argv[2], so a test can read the URLs while the
 * pane shows only the recorded screens.
 */
import { createWriteStream } from "node:fs";
import { main } from "../../../src/cli/main.js";

const [file, ...argv] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: replay-entry.ts <stderr-file> sim --replay DIR …");
const stderr = createWriteStream(file);
const controller = new AbortController();
process.on("SIGTERM", () => controller.abort());
process.on("SIGHUP", () => controller.abort());
const code = await main({ argv, env: process.env, stdin: process.stdin, stdout: process.stdout, stderr, signal: controller.signal });
stderr.end(() => process.exit(code));
