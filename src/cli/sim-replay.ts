/**
 * `agy-bridge sim --replay DIR`: serves a capture (docs/capture.md) as agy
 * served it — RPC on two loopback listeners and the recorded screens in this
 * terminal — so a bug seen on a real agy is reproduced here. A capture may
 * be someone else's: the loader refuses links and oversized files, and every
 * screen row is shown through `terminalText`, never written raw.
 */
import { loadReplayCapture } from "../sim/replay/capture-loader.js";
import { createReplayScreen } from "../sim/replay/replay-screen.js";
import { startReplayServer } from "../sim/replay/replay-server.js";
import type { CliIo } from "./command.js";
import { terminalText } from "./terminal-text.js";
import { untilAborted } from "../util/sleep.js";

export interface ReplayArgs {
  dir: string;
  speed?: number;
  csrfToken?: string;
  headless: boolean;
}

export async function runReplay(io: CliIo, args: ReplayArgs): Promise<number> {
  const capture = loadReplayCapture(args.dir);
  const server = await startReplayServer({
    capture,
    ...(args.speed === undefined ? {} : { speed: args.speed }),
    ...(args.csrfToken === undefined ? {} : { csrfToken: args.csrfToken }),
  });
  try {
    if (args.headless) {
      io.stdout.write(
        `${JSON.stringify({ conversationId: server.conversationId, tlsUrl: server.tlsUrl, plainUrl: server.plainUrl, pid: process.pid, csrfTokenPresent: args.csrfToken !== undefined, agyVersion: capture.agyVersion, replay: args.dir })}\n`,
      );
      await untilAborted(io.signal);
      return 0;
    }
    io.stderr.write(
      `${terminalText(`agy-bridge sim --replay: conversation ${server.conversationId} at ${server.tlsUrl} (TLS) and ${server.plainUrl} (plain)`)}\n`,
    );
    // The capture may be someone else's: its screens are shown, never obeyed (OSC 52, titles, links, C1 controls).
    const screen = createReplayScreen({ server, input: io.stdin, output: io.stdout, safeText: (row) => terminalText(row) });
    screen.start();
    await Promise.race([screen.closed, untilAborted(io.signal)]);
    screen.stop();
    return 0;
  } finally {
    await server.close();
  }
}
