/**
 * The policy's latency (design goal: a decision reaches agy within 50 ms of
 * the gate, p50): the simulator in-process on real loopback sockets, a
 * session attached with a policy that approves the scenario's commands, and
 * the time from the step parking in WAITING to the simulator holding the
 * answer — against, in the same run, the time from the same park to
 * `interaction_requested` at a plain consumer (the detection the decision
 * rides on). Also what deciding costs, against parsing the line alone.
 */
import { performance } from "node:perf_hooks";
import { AgySession } from "../src/session/index.js";
import { STEP_STATUS } from "../src/protocol/wire-names.js";
import { startSimServer } from "../src/sim/index.js";
import { analyseCommandLine, decide, parsePolicy } from "../src/policy/index.js";
import { measure, summarize, type BenchRow, type BenchSuite } from "./harness.js";

const POLICY = parsePolicy(
  `version: 1
rules:
  - id: no-delete
    kind: command
    commands: ["rm *", "git clean*"]
    action: deny
  - id: read-only
    kind: command
    commands: ["pwd", "git status*", "git log*", "ls*", "cat *", "grep *"]
    action: approve
`,
  "bench-policy.yaml",
);

async function waitUntil(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("bench: a condition did not hold in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Park → answer held by agy (policy), and park → interaction_requested (detection alone). */
async function decisionLatency(withPolicy: boolean): Promise<number[]> {
  const sim = await startSimServer({ speed: 0 });
  const id = sim.engine.activeConversationId;
  const conv = sim.engine.conversation(id)!;
  const session = await AgySession.attach({ url: sim.plainUrl, conversationId: id, ...(withPolicy ? { policy: POLICY } : {}) });
  const parkedAt = new Map<number, number>();
  const answeredAt = new Map<number, number>();
  conv.subscribe((indices) => {
    for (const i of indices) {
      const status = conv.steps[i]?.status;
      if (status === STEP_STATUS.WAITING && !parkedAt.has(i)) parkedAt.set(i, performance.now());
      else if (parkedAt.has(i) && status !== STEP_STATUS.WAITING && !answeredAt.has(i)) answeredAt.set(i, performance.now());
    }
  });
  const requestedAt = new Map<number, number>();
  const reading = (async () => {
    for await (const event of session.events({ history: false })) {
      if (event.type !== "interaction_requested") continue;
      requestedAt.set(event.stepIndex, performance.now());
      if (!withPolicy) void session.approve(event.interactionId);
    }
  })();
  const out: number[] = [];
  for (let round = 0; round < 20; round++) {
    for (const text of ["Run pwd", "Show git status and recent commits"]) {
      const before = new Set(parkedAt.keys());
      conv.submit(text);
      await waitUntil(() => !conv.running);
      for (const [index, parked] of parkedAt) {
        if (before.has(index)) continue;
        const end = withPolicy ? answeredAt.get(index) : requestedAt.get(index);
        if (end !== undefined) out.push(end - parked);
      }
    }
  }
  await session.close();
  await reading;
  await sim.close();
  return out;
}

const suite: BenchSuite = {
  title: "policy (decisions over RPC)",
  async run(): Promise<BenchRow[]> {
    const detection = summarize(await decisionLatency(false));
    const decided = summarize(await decisionLatency(true));
    const line = "git status --short && git log --oneline -20 | grep -v wip; ls -la src > /dev/null";
    const decideCost = await measure(() => decide(POLICY, { kind: "command", commandLine: line }), { warmup: 50, runs: 300 });
    const parseCost = await measure(() => analyseCommandLine(line), { warmup: 50, runs: 300 });
    return [
      {
        name: `gate parked → policy's answer held by agy (p99 ${decided.p99Ms.toFixed(2)} ms)`,
        sample: decided,
        baseline: { name: `gate parked → interaction_requested (p99 ${detection.p99Ms.toFixed(2)} ms)`, sample: detection },
        goal: "p50 <= 50 ms",
        met: decided.medianMs <= 50,
      },
      { name: "decide() on a 5-command line", sample: decideCost, baseline: { name: "the shell parse alone", sample: parseCost } },
    ];
  },
};

export default suite;
