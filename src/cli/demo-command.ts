/**
 * `agy-bridge demo`: a supervised session against the simulator, end to end
 * over real loopback sockets. The simulated agy plays scripted turns; the
 * bridge reads them through the stream watcher (reconciling with a snapshot
 * on every connect), maps them to events, and answers each approval and
 * question over RPC after re-reading the step it targets.
 */
import { randomBytes } from "node:crypto";
import type { CliIo, Command } from "./command.js";
import { AgyBridgeError } from "../errors.js";
import { createAgyRpcClient, watchAgentStateUpdates, type AgyRpcClient } from "../rpc/index.js";
import { STEP_STATUS } from "../protocol/wire-names.js";
import { createTrajectoryTracker, type MapperEvent, type PendingInteraction } from "../mapper/index.js";
import { startSimServer } from "../sim/server/server.js";
import { formatEvent } from "./event-text.js";

const DEFAULT_TURNS = [
  "Say hello in one short sentence.",
  "Run pwd",
  "Help me start a project",
  "Which features should I add?",
];

/** How long a running turn may stay silent before the demo takes a snapshot. */
const QUIET_POLL_MS = 400;

const HELP = `Usage: agy-bridge demo [--json] [--turn TEXT]... [--timeout MS]

Runs a supervised session against the simulated agy: starts the simulator on
loopback (TLS, with a CSRF token), plays a few turns, prints the mapped events,
and answers every approval (allow) and question (first option) over
HandleCascadeUserInteraction, re-reading the waiting step before each answer.

Turns are handed to the simulator as if typed in its TUI (the real turn path,
typing into agy's pane with tmux, is not part of this demo).

Options:
  --json          NDJSON events on stdout (one per line); notes on stderr
  --turn TEXT     a turn to play instead of the default script (repeatable)
  --timeout MS    give up when a turn has not finished after MS (default 30000)
  --help          this text
`;

interface DemoOptions {
  json: boolean;
  turns: string[];
  timeoutMs: number;
}

function parseArgs(argv: readonly string[]): DemoOptions | string {
  const options: DemoOptions = { json: false, turns: [], timeoutMs: 30_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--json") options.json = true;
    else if (arg === "--turn" || arg === "--timeout") {
      const value = argv[++i];
      if (value === undefined) return `${arg} needs a value`;
      if (arg === "--turn") options.turns.push(value);
      else {
        const ms = Number(value);
        if (!Number.isInteger(ms) || ms <= 0) return `--timeout takes a positive whole number of milliseconds, not "${value}"`;
        options.timeoutMs = ms;
      }
    } else return `unknown option "${arg}"`;
  }
  if (options.turns.length === 0) options.turns = [...DEFAULT_TURNS];
  return options;
}

/** Builds the answer a cautious demo bot gives: allow commands, pick each question's first option. */
function demoAnswer(pending: PendingInteraction) {
  const target = { cascadeId: "", trajectoryId: pending.trajectoryId, stepIndex: pending.stepIndex };
  if (pending.request.kind === "permission") return { ...target, permission: { allow: true } };
  return {
    ...target,
    askQuestion: {
      responses: pending.request.questions.map((q) => ({
        question: q.question,
        selectedOptionIds: q.options.slice(0, 1).map((o) => o.id),
      })),
    },
  };
}

/** Answers one interaction, but only if the step is still WAITING when re-read. */
async function answerFresh(
  client: AgyRpcClient,
  conversationId: string,
  pending: PendingInteraction,
  signal: AbortSignal,
): Promise<string> {
  const { steps } = await client.getCascadeTrajectorySteps({ cascadeId: conversationId }, { signal });
  const fresh = steps[pending.stepIndex];
  const freshInfo = fresh?.metadata?.sourceTrajectoryStepInfo;
  if (fresh?.status !== STEP_STATUS.WAITING || (freshInfo?.trajectoryId ?? pending.trajectoryId) !== pending.trajectoryId) {
    return `step ${pending.stepIndex} is no longer waiting; not answered`;
  }
  const answer = { ...demoAnswer(pending), cascadeId: conversationId };
  await client.handleCascadeUserInteraction(answer, { signal });
  if (!("askQuestion" in answer)) return `answered step ${pending.stepIndex}: allow`;
  const picked = answer.askQuestion.responses.map((r) => r.selectedOptionIds.join("+")).join(", ");
  return `answered step ${pending.stepIndex}: option ${picked}`;
}

async function runDemo(io: CliIo, options: DemoOptions): Promise<number> {
  const note = (line: string) => (options.json ? io.stderr : io.stdout).write(`${line}\n`);
  const csrfToken = randomBytes(16).toString("hex");
  const sim = await startSimServer({ csrfToken, speed: 0.3 });
  const client = createAgyRpcClient({ baseUrl: sim.tlsUrl, csrfToken });
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  io.signal.addEventListener("abort", onAbort, { once: true });
  const conversationId = sim.engine.activeConversationId;
  const tracker = createTrajectoryTracker({ conversationId });
  const answered = new Set<string>();
  let turnsClosed = 0;
  let wake: () => void = () => {};

  const emit = (events: MapperEvent[]) => {
    for (const event of events) {
      if (options.json) io.stdout.write(`${JSON.stringify(event)}\n`);
      else {
        const line = formatEvent(event);
        if (line !== undefined) io.stdout.write(`${line}\n`);
      }
      if (event.type === "status" && (event.status === "idle" || event.status === "failed")) turnsClosed++;
    }
    for (const pending of tracker.pendingInteractions()) {
      if (answered.has(pending.interactionId)) continue;
      answered.add(pending.interactionId);
      answerFresh(client, conversationId, pending, stop.signal).then(
        (outcome) => note(`  [bot] ${outcome}`),
        (error: unknown) => note(`  [bot] could not answer step ${pending.stepIndex}: ${AgyBridgeError.from(error).message}`),
      );
    }
    wake();
  };

  let connected!: () => void;
  const firstConnect = new Promise<void>((resolve) => (connected = resolve));
  const reader = (async () => {
    for await (const event of watchAgentStateUpdates(client, { conversationId, signal: stop.signal })) {
      if (event.type === "connected") {
        const snapshot = await client.getCascadeTrajectorySteps({ cascadeId: conversationId }, { signal: stop.signal });
        emit(tracker.applySnapshot({ steps: snapshot.steps }));
        connected();
      } else if (event.type === "update") emit(tracker.applyStreamUpdate(event.update));
      else if (event.reason !== undefined) note(`  [bridge] stream lost (${event.reason.message}); reconnecting`);
    }
  })();

  // agy sends no stream frames while a step waits on the user, so a turn that
  // has gone quiet is reconciled with a snapshot (the tracker dedups).
  let lastFrameAt = Date.now();
  const quietPoll = setInterval(() => {
    if (!tracker.turnActive || Date.now() - lastFrameAt < QUIET_POLL_MS) return;
    lastFrameAt = Date.now();
    client.getCascadeTrajectorySteps({ cascadeId: conversationId }, { signal: stop.signal }).then(
      (snapshot) => emit(tracker.applySnapshot({ steps: snapshot.steps })),
      () => undefined,
    );
  }, QUIET_POLL_MS / 2);

  note(`agy-bridge demo: simulated agy at ${sim.tlsUrl} (TLS, CSRF token required), conversation ${conversationId}`);
  let exitCode = 0;
  try {
    await firstConnect;
    const port = sim.engine.tuiPort();
    for (const [i, text] of options.turns.entries()) {
      const closedBefore = turnsClosed;
      port.submitTurn(text);
      const deadline = Date.now() + options.timeoutMs;
      while (turnsClosed === closedBefore) {
        if (Date.now() > deadline) {
          throw new AgyBridgeError("timeout", `turn ${i + 1} ("${text}") did not finish within ${options.timeoutMs} ms`);
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
        if (stop.signal.aborted) return 130;
      }
    }
    note("agy-bridge demo: done");
  } catch (error) {
    io.stderr.write(`agy-bridge demo: ${AgyBridgeError.from(error).message}\n`);
    exitCode = 1;
  } finally {
    clearInterval(quietPoll);
    io.signal.removeEventListener("abort", onAbort);
    stop.abort();
    await reader.catch(() => undefined);
    await client.close();
    await sim.close();
  }
  return exitCode;
}

export const demoCommand: Command = {
  name: "demo",
  summary: "a supervised session against the simulated agy, with approvals answered over RPC",
  help: HELP,
  async run(io) {
    const options = parseArgs(io.argv);
    if (typeof options === "string") {
      io.stderr.write(`agy-bridge demo: ${options}; see --help\n`);
      return 2;
    }
    return runDemo(io, options);
  },
};
