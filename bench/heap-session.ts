/**
 * The heap one idle `AgySession` retains once it followed a 10,000-step
 * conversation built from the real captures. The simulator runs in its own
 * process (`capture-sim.ts`), so this process holds only the session: a
 * consumer reads the history to `history_end` and stays subscribed, the
 * session idles through a few probes, then the heap is measured after GC
 * against the heap before the attach — after a first session was attached
 * and closed, so what the process pays once (compiled code, the HTTP agent)
 * is not counted. Used by `heap-probe.ts session`.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AgySession } from "../src/session/index.js";

const here = dirname(fileURLToPath(import.meta.url));

export async function retainedBySession(count: number, settledHeap: () => number, keep: unknown[]): Promise<number> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "capture-sim.ts"), String(count)], { stdio: ["pipe", "pipe", "inherit"] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`capture-sim exited with ${code}`)));
    });
    const { plainUrl, conversationId } = JSON.parse(line) as { plainUrl: string; conversationId: string };
    const follow = async (idleMs: number) => {
      const session = await AgySession.attach({ url: plainUrl, conversationId, locatePane: false });
      let seen = 0;
      await new Promise<void>((resolve) => {
        void (async () => {
          for await (const event of session.events()) {
            seen++;
            if (event.type === "history_end") resolve();
          }
        })();
      });
      // Idle: the stream settles and a few probes run.
      await new Promise((r) => setTimeout(r, idleMs));
      return { session, seen };
    };
    // A first session, closed: what any session costs once per process (compiled code, the HTTP agent) is not this one's.
    await (await follow(200)).session.close();
    // Its sockets and timers wind down before the baseline.
    await new Promise((r) => setTimeout(r, 1000));
    const before = settledHeap();
    const { session, seen } = await follow(Number(process.env.IDLE_MS ?? 4000));
    keep.push(session);
    const retained = settledHeap() - before;
    process.stdout.write(`${JSON.stringify({ what: "session", count, events: seen, retained })}\n`);
    await session.close();
    return retained;
  } finally {
    child.stdin!.end();
    child.kill();
  }
}
