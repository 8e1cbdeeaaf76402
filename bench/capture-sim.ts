/**
 * A simulator in its own process hosting one conversation built from the
 * real captures (`capture-snapshot.ts`), so a measuring process holds only
 * what it measures. Prints `{"plainUrl","conversationId"}` on one line, then
 * serves until its stdin closes.
 *
 *   node --import tsx bench/capture-sim.ts 10000
 */
import { startSimServer } from "../src/sim/index.js";
import { buildCaptureSnapshot } from "./capture-snapshot.js";

const count = Number(process.argv[2] ?? 10_000);
const sim = await startSimServer({ speed: 0 });
const conversation = sim.engine.startHeadless("capture-history");
for (const step of (JSON.parse(buildCaptureSnapshot(count)) as { steps: never[] }).steps) conversation.steps.push(step);
process.stdout.write(`${JSON.stringify({ plainUrl: sim.plainUrl, conversationId: conversation.id })}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  void sim.close().finally(() => process.exit(0));
});
