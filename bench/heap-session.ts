/**
 * The heap one idle `AgySession` retains once it followed a 10,000-step
 * conversation built from the real captures: the simulator hosts the
 * conversation in the same process (it is there before the first
 * measurement, so only what the session keeps counts), a consumer reads the
 * history to `history_end` and stays subscribed, then the heap is measured
 * after GC. Used by `heap-probe.ts session`.
 */
import { createAgyRpcClient } from "../src/rpc/index.js";
import { AgySession } from "../src/session/index.js";
import { startSimServer } from "../src/sim/index.js";
import { buildCaptureSnapshot } from "./capture-snapshot.js";

export async function retainedBySession(count: number, settledHeap: () => number, keep: unknown[]): Promise<number> {
  const sim = await startSimServer({ speed: 0 });
  const conversation = sim.engine.startHeadless("bench-history");
  for (const step of (JSON.parse(buildCaptureSnapshot(count)) as { steps: never[] }).steps) conversation.steps.push(step);
  // A raw read first, so whatever the simulator builds on its first answer is there before the baseline.
  const client = createAgyRpcClient({ baseUrl: sim.plainUrl });
  await client.getCascadeTrajectorySteps({ conversationId: conversation.id });
  await client.close();
  const before = settledHeap();
  const session = await AgySession.attach({ url: sim.plainUrl, conversationId: conversation.id, locatePane: false });
  let seen = 0;
  const historyRead = new Promise<void>((resolve) => {
    void (async () => {
      for await (const event of session.events()) {
        seen++;
        if (event.type === "history_end") resolve();
      }
    })();
  });
  await historyRead;
  // Idle: let the stream settle and a few probes run.
  await new Promise((r) => setTimeout(r, 1500));
  keep.push(session, sim);
  const retained = settledHeap() - before;
  process.stdout.write(`${JSON.stringify({ what: "session", count, events: seen, retained })}\n`);
  await session.close();
  await sim.close();
  return retained;
}
