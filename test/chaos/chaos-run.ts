/**
 * One chaos run: a private simulator, the chaos proxy in front of it, and an
 * `AgySession` attached through the proxy, playing the script of
 * chaos-script.ts under a fault list. It returns the event log, the
 * supervisor's answers, what the simulator recorded, and every failure it
 * saw (a hang past its bound, an answer on the wrong step, a leaked handle).
 */
import { AgySession, type AgySessionApi, type AnswerResult } from "../../src/session/index.js";
import type { EventOf, MapperEvent } from "../../src/mapper/index.js";
import { STEP_STATUS } from "../../src/protocol/wire-names.js";
import { asIndex, asObject, asString } from "../../src/protocol/json.js";
import { loadScenarios, startSimServer, type SimServer } from "../../src/sim/index.js";
import { ManualTimeouts } from "../sim/support/manual-timeouts.js";
import { startChaosProxy, type ChaosProxy } from "./chaos-proxy.js";
import { isAgySide, type Fault } from "./fault-plan.js";
import { LONG_JOB, TURNS, gateKeyOfRequest, gateKeyOfStep, tuiAnswerFor, verdictFor } from "./chaos-script.js";
import { checkAttribution, checkRecord, type AnswerRecord } from "./delivery-check.js";
import { normalise } from "./normalise.js";
import { until, UntilTimeout } from "../support/until.js";

export interface RunOutcome {
  /** The faults that fired (transport faults at the proxy, agy-side ones in the harness). */
  fired: Fault[];
  /** Events the session delivered (raw count). */
  events: number;
  /** The normalised log (normalise.ts). */
  log: string[];
  answers: AnswerRecord[];
  /** Answers on the wrong step, or a gate answered twice or not at all (the simulator's record). */
  misdelivered: string[];
  /** A wait that passed its bound. */
  hang: string | undefined;
  /** Anything else that went wrong: an answer that kept failing, a leaked handle, an unhandled rejection. */
  errors: string[];
}

const DECIDED_BY = "chaos:supervisor";
const TURN_BOUND_MS = 25_000;
const shipped = await loadScenarios();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class Hang extends Error {}

/** Whether `promise` settles within `ms` (its timer cleared either way, so nothing outlives the run). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The runs' waits: polled every 5 ms, bounded by a turn, and a check that throws fails the run at once. */
const WAIT = { ms: TURN_BOUND_MS, everyMs: 5, errors: "throw" } as const;

/** A wait that passed its bound (an `until` timing out), or an interrupt that never got through. */
const isHang = (error: unknown): error is Error => error instanceof Hang || error instanceof UntilTimeout;

/** Resources that outlive a run when something leaks. */
function handles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === "TCPSocketWrap" || kind === "TCPServerWrap" || kind === "Timeout") counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

export async function runScript(faults: readonly Fault[]): Promise<RunOutcome> {
  const baseline = handles();
  const fired: Fault[] = [];
  const errors: string[] = [];
  const answers: AnswerRecord[] = [];
  const log: MapperEvent[] = [];
  const clock = new ManualTimeouts(60_000);
  const sim = await startSimServer({ speed: 0.05, clock, interactionTimeoutMs: 3_600_000, scenarios: [...shipped, LONG_JOB] });
  const agyFaults = faults.filter(isAgySide);
  /** Gates a person answered in the TUI ("conversationId/stepIndex"). */
  const byPerson = new Set<string>();
  /** Answer calls that arrived at the proxy, by "conversationId/stepIndex". */
  const attempts = new Map<string, number>();
  const proxy = await startChaosProxy({
    faults: faults.filter((f) => !isAgySide(f)),
    targetPort: () => sim.plainPort,
    position: () => sim.engine.conversations().reduce((n, conv) => n + conv.steps.length, 0),
    observe: (request) => request.method === "HandleCascadeUserInteraction" && personAnswers(sim, agyFaults, fired, byPerson, attempts, request.body),
    restartAgy: () => sim.restart(),
    beforeForward: async (request) => {
      if (request.method === "HandleCascadeUserInteraction") await agyTimesOut(sim, clock, agyFaults, fired, request.body);
    },
  }).catch(async (error: unknown) => {
    await sim.close();
    throw error;
  });
  const onRejection = (reason: unknown) => errors.push(`unhandled rejection: ${String(reason)}`);
  process.on("unhandledRejection", onRejection);
  let session: AgySessionApi | undefined;
  let hang: string | undefined;
  const tasks = new Set<Promise<void>>();
  let reading: Promise<void> = Promise.resolve();
  try {
    session = await attach(sim, proxy);
    const live = session;
    reading = (async () => {
      let historyDone = false;
      for await (const event of live.events()) {
        log.push(event);
        if (event.type === "history_end") historyDone = true;
        if (historyDone && event.type === "interaction_requested") {
          const task = supervise(live, event as EventOf<"interaction_requested">, answers, errors);
          tasks.add(task);
          void task.finally(() => tasks.delete(task));
        }
      }
    })();
    await until(() => sim.openStreams(live.conversationId) > 0, "stream from the session", WAIT);
    for (const [t, turn] of TURNS.entries()) {
      const seen = log.length;
      const before = sim.engine.conversation(sim.engine.activeConversationId)!.steps.length;
      if (process.env["CHAOS_TRACE"] === "1") process.stderr.write(`turn ${t} "${turn.text}" at event ${seen}\n`);
      sim.engine.tuiPort().submitTurn(turn.text);
      const clear = agyFaults.find((f) => f.kind === "clear_mid_turn" && f.turn === t);
      if (clear !== undefined) {
        const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
        // Mid-turn: once the turn's first planner has streamed (so /clear comes milliseconds after the turn began).
        await until(() => conv.running && conv.steps.length >= before + 3, `the middle of turn ${t}`, WAIT);
        sim.engine.tuiPort().clear();
        fired.push(clear);
      }
      if (turn.interrupt === true) await interrupt(sim, live);
      const start = await until(
        () => log.findIndex((e, i) => i >= seen && e.type === "user_message" && e.text === turn.text) + 1 || undefined,
        `user_message "${turn.text}"`,
        WAIT,
      );
      await until(
        () => log.slice(start).some((e) => e.type === "status" && (e.status === "idle" || e.status === "failed")),
        `end of turn "${turn.text}"`,
        WAIT,
      );
      await until(() => tasks.size === 0, `the answers of turn "${turn.text}"`, WAIT);
    }
  } catch (error) {
    if (isHang(error)) hang = error.message;
    else errors.push(`the run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await session?.close();
    if (!(await within(reading, 5000))) errors.push("events() did not end within 5 s of close()");
    if (!(await within(Promise.all(tasks), 5000))) errors.push("an answer was still running 5 s after close()");
    await proxy.close();
    await sim.close();
  }
  fired.unshift(...proxy.fired);
  if (process.env["CHAOS_TRACE"] === "1") {
    process.stderr.write(`requests: ${JSON.stringify([...proxy.requests])}\n`);
    const last = new Map<string, number>();
    for (const { method, position } of proxy.trace) last.set(method, Math.max(last.get(method) ?? 0, position));
    process.stderr.write(`trace: ${proxy.trace.map((t) => `${t.method.replace("Cascade", "").slice(0, 14)}:${t.position}`).join(" ")}\n`);
    process.stderr.write(`last step count per method: ${JSON.stringify([...last])}\n`);
  }
  const misdelivered = checkRecord(sim, answers, hang === undefined);
  errors.push(...checkAttribution(log, byPerson, DECIDED_BY));
  await until(() => [...handles()].every(([kind, n]) => n <= (baseline.get(kind) ?? 0)) || undefined, "release of sockets and timers", {
    ...WAIT,
    ms: 3000,
  }).catch(() => {
    errors.push(`handles left after close: ${JSON.stringify([...handles()])} (before: ${JSON.stringify([...baseline])})`);
  });
  process.off("unhandledRejection", onRejection);
  return { fired, events: log.length, log: normalise(log), answers, misdelivered, hang, errors };
}

/** A supervisor re-attaches when attaching fails (agy unreachable for a moment). */
async function attach(sim: SimServer, proxy: ChaosProxy): Promise<AgySessionApi> {
  let last: unknown;
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      return await AgySession.attach({
        url: proxy.url,
        locate: async () => ({ url: proxy.url, how: "chaos proxy" }),
        conversationId: sim.engine.activeConversationId,
        relocate: true,
        idleCheckIntervalMs: 100,
        locatePane: false,
      });
    } catch (error) {
      last = error;
      await sleep(50 * (attempt + 1));
    }
  }
  throw new Error(`could not attach: ${String(last)}`);
}

/** Answers a gate with the verdict meant for it, retrying a call that failed on the wire (as any supervisor would). */
async function supervise(session: AgySessionApi, event: EventOf<"interaction_requested">, answers: AnswerRecord[], errors: string[]): Promise<void> {
  const key = gateKeyOfRequest(event.request);
  if (key === undefined) {
    errors.push(`a gate the script does not have: ${JSON.stringify(event.request)}`);
    return;
  }
  const verdict = verdictFor(key);
  let last: unknown;
  for (let attempt = 0; attempt < 12; attempt++) {
    try {
      const result: AnswerResult =
        verdict.kind === "approve"
          ? await session.approve(event.interactionId, { decidedBy: DECIDED_BY })
          : verdict.kind === "deny"
            ? await session.deny(event.interactionId, { instruction: verdict.instruction, decidedBy: DECIDED_BY })
            : await session.answer(event.interactionId, { optionIds: verdict.optionIds, decidedBy: DECIDED_BY });
      answers.push({ key, interactionId: event.interactionId, conversationId: event.conversationId, stepIndex: event.stepIndex, result });
      return;
    } catch (error) {
      last = error;
      await sleep(40 * (attempt + 1));
    }
  }
  errors.push(`the answer to the ${key} gate failed 12 times: ${String(last)}`);
}

/** Interrupts the running long job, retrying calls that failed on the wire. */
async function interrupt(sim: SimServer, session: AgySessionApi): Promise<void> {
  const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
  await until(
    () => conv.steps.some((s) => s.status === STEP_STATUS.RUNNING && asObject(s["runCommand"])?.["commandLine"] === "sleep 600"),
    "the long job running",
    WAIT,
  );
  for (let attempt = 0; attempt < 12; attempt++) {
    try {
      const result = await session.interrupt();
      if (result.result === "cancelled" || (result.result === "idle" && !conv.running)) return;
    } catch {
      // The wire failed: ask again.
    }
    await sleep(40 * (attempt + 1));
  }
  throw new Hang("the interrupt did not get through in 12 attempts");
}

/** The step a HandleCascadeUserInteraction body answers. */
function answerTarget(body: Buffer): { conversationId: string; stepIndex: number } | undefined {
  try {
    const request = asObject(JSON.parse(body.toString("utf8")) as unknown);
    const stepIndex = asIndex(asObject(request?.["interaction"])?.["stepIndex"] ?? 0);
    const conversationId = asString(request?.["cascadeId"]);
    return stepIndex === undefined || conversationId === undefined ? undefined : { conversationId, stepIndex };
  } catch {
    return undefined;
  }
}

/** The gate a HandleCascadeUserInteraction body answers, when it still waits. */
function waitingGate(sim: SimServer, body: Buffer) {
  const target = answerTarget(body);
  const conv = sim.engine.conversation(target?.conversationId ?? "");
  const index = target?.stepIndex;
  const step = index === undefined ? undefined : conv?.steps[index];
  if (conv === undefined || index === undefined || step === undefined || step.status !== STEP_STATUS.WAITING) return undefined;
  const key = gateKeyOfStep(step);
  return key === undefined ? undefined : { conv, index, key };
}

/**
 * A person answers the gate in the TUI, with the supervisor's verdict, the
 * moment the supervisor's first answer to it arrives at the proxy — so that
 * answer is in flight and will be refused. True: the proxy must let it
 * through with its reply (see chaos-proxy.ts `observe`).
 */
function personAnswers(sim: SimServer, faults: readonly Fault[], fired: Fault[], byPerson: Set<string>, attempts: Map<string, number>, body: Buffer): boolean {
  const target = answerTarget(body);
  if (target === undefined) return false;
  const at = `${target.conversationId}/${target.stepIndex}`;
  attempts.set(at, (attempts.get(at) ?? 0) + 1);
  const gate = waitingGate(sim, body);
  if (gate === undefined || attempts.get(at) !== 1 || gate.conv.id !== sim.engine.activeConversationId) return false;
  const fault = faults.find((f) => f.kind === "tui_race" && f.gate === gate.key && !fired.includes(f));
  if (fault === undefined) return false;
  if (!sim.engine.tuiPort().answer(gate.index, tuiAnswerFor(gate.key))) throw new Error(`the TUI could not answer step ${gate.index}`);
  fired.push(fault);
  byPerson.add(at);
  return true;
}

/** agy times the gate out while the supervisor's answer to it is held at the proxy, and retries the prompt. */
async function agyTimesOut(sim: SimServer, clock: ManualTimeouts, faults: readonly Fault[], fired: Fault[], body: Buffer): Promise<void> {
  const gate = waitingGate(sim, body);
  if (gate === undefined) return;
  const fault = faults.find((f) => f.kind === "timeout_retry" && f.gate === gate.key && !fired.includes(f));
  if (fault === undefined) return;
  fired.push(fault);
  const conv = gate.conv;
  const before = conv.steps.length;
  clock.fireHeld();
  await until(() => conv.steps.length > before && conv.steps[conv.steps.length - 1]?.status === STEP_STATUS.WAITING, "agy's retry of the timed-out prompt", {
    ...WAIT,
    ms: 5000,
  });
}
