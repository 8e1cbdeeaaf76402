/**
 * Run as a child under a low `ulimit -n`: imports everything first, then
 * opens files until the process is out of descriptors (EMFILE), then asks
 * each of agy-bridge's spawning functions to run a program and prints one
 * JSON line saying how each ended. A crash (an 'error' event nobody listens
 * to, or a read of a child's missing stdout) ends the process before the line.
 */
import { openSync } from "node:fs";
import { spawnCommand } from "../../../src/discovery/run-command.js";
import { spawnTmux } from "../../../src/tmux/spawn-tmux.js";

const held: number[] = [];
let exhausted = "";
try {
  for (;;) held.push(openSync("/dev/null", "r"));
} catch (error) {
  exhausted = (error as NodeJS.ErrnoException).code ?? "unknown";
}

const describe = (error: unknown) => ({ name: (error as Error).name, code: (error as { code?: unknown }).code, message: (error as Error).message });
const command = await spawnCommand("ls", ["/"], { timeoutMs: 5_000 });
const tmux = await spawnTmux("tmux", ["-V"], { timeoutMs: 5_000 }).then(
  (result) => ({ resolved: result }),
  (error: unknown) => ({ rejected: describe(error) }),
);
process.stdout.write(`${JSON.stringify({ exhausted, command, tmux })}\n`);
