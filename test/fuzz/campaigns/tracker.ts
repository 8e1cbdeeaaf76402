/**
 * The trajectory tracker under damaged histories: a plausible conversation
 * (user turns, planner text growing while GENERATING, tools that wait for a
 * permission or a question, time out, settle) delivered as stream frames,
 * snapshots and run statuses, with some of them damaged at the JSON level,
 * plus calls with arguments of the wrong type. Promises:
 * - it never throws, except a typed `AgyBridgeError` for an argument of the wrong type;
 * - every event passes `MapperEventSchema` and `JSON.stringify(event)` works;
 * - at most one `interaction_requested` per interactionId, unless it was resolved in between;
 * - nothing stays pending once its step is no longer WAITING.
 */
import { AgyBridgeError } from "../../../src/errors.js";
import { createTrajectoryTracker, MapperEventSchema, type MapperEvent, type TrajectoryTracker } from "../../../src/mapper/index.js";
import { RUN_STATUS, STEP_STATUS, STEP_TYPE } from "../../../src/protocol/wire-names.js";
import type { StreamUpdate } from "../../../src/protocol/wire-schemas.js";
import { mutateJson, nested, oddValue } from "../mutate.js";
import type { Rng } from "../rng.js";
import { invariant, type Campaign } from "../runner.js";
import { stepsUpdate } from "./wire-samples.js";

const CID = "fuzz-conversation";
const TID = "fuzz-trajectory";

export type TrackerOp =
  | { op: "frame"; update: unknown }
  | { op: "snapshot"; input: unknown }
  | { op: "steps"; steps: unknown }
  | { op: "runStatus"; input: unknown }
  | { op: "reconnect" };

/** One moment of agy's history: the step at `index` becomes `step`. */
interface Tick {
  index: number;
  step: Record<string, unknown>;
}

const info = (stepIndex: number) => ({ trajectoryId: TID, cascadeId: CID, ...(stepIndex === 0 ? {} : { stepIndex }) });

function history(rng: Rng): Tick[] {
  const ticks: Tick[] = [];
  let index = 0;
  for (let turn = 0, turns = rng.between(1, 3); turn < turns; turn++) {
    ticks.push({
      index: index++,
      step: {
        type: STEP_TYPE.USER_INPUT,
        status: STEP_STATUS.DONE,
        metadata: { executionId: `exec-${turn}`, sourceTrajectoryStepInfo: info(index - 1) },
        userInput: { userResponse: `question ${turn}` },
      },
    });
    for (let tool = 0, tools = rng.between(0, 2); tool < tools; tool++) {
      const at = index++;
      const question = rng.chance(0.4);
      const body = question
        ? {
            type: STEP_TYPE.ASK_QUESTION,
            askQuestion: {
              questions: [
                {
                  question: "Which?",
                  options: [
                    { id: "1", text: "a" },
                    { id: "2", text: "b" },
                  ],
                },
              ],
            },
          }
        : { type: STEP_TYPE.RUN_COMMAND, runCommand: { commandLine: `cmd ${at}` } };
      const request = question
        ? {
            requestedInteraction: {
              askQuestion: {
                questions: [
                  {
                    question: "Which?",
                    options: [
                      { id: "1", text: "a" },
                      { id: "2", text: "b" },
                    ],
                  },
                ],
              },
            },
          }
        : { requestedInteraction: { permission: { resource: { action: "command", target: `cmd ${at}` } } } };
      const step = (status: string, extra: Record<string, unknown> = {}) => ({
        index: at,
        step: { ...body, status, metadata: { sourceTrajectoryStepInfo: info(at), toolCall: { id: `call-${at}`, name: "run_command" } }, ...extra },
      });
      ticks.push(step(STEP_STATUS.PENDING));
      if (rng.chance(0.7)) {
        ticks.push(step(STEP_STATUS.WAITING, request));
        if (rng.chance(0.3)) ticks.push(step(STEP_STATUS.WAITING, request));
      }
      ticks.push(step(rng.pick([STEP_STATUS.DONE, STEP_STATUS.DONE, STEP_STATUS.ERROR, STEP_STATUS.CANCELED])));
    }
    const at = index++;
    const chunks = rng.between(1, 3);
    for (let c = 1; c <= chunks; c++) {
      ticks.push({
        index: at,
        step: {
          type: STEP_TYPE.PLANNER_RESPONSE,
          status: c === chunks ? STEP_STATUS.DONE : STEP_STATUS.GENERATING,
          metadata: {
            sourceTrajectoryStepInfo: info(at),
            modelUsage: { model: "MODEL_A", inputTokens: String(100 * c), outputTokens: String(10 * c) },
          },
          plannerResponse: { response: `answer ${turn} `.repeat(c) },
        },
      });
    }
  }
  return ticks;
}

function generate(rng: Rng): TrackerOp[] {
  const ticks = history(rng);
  const current = new Map<number, Record<string, unknown>>();
  const ops: TrackerOp[] = [];
  const damage = <T>(value: T): unknown => (rng.chance(0.3) ? mutateJson(rng, value) : value);
  const target = (steps: Array<Record<string, unknown>>) => (rng.chance(0.25) ? steps.map((step) => aim(rng, step)) : steps);
  for (let t = 0; t < ticks.length; ) {
    const take = rng.between(1, 3);
    const batch = ticks.slice(t, t + take);
    t += take;
    for (const tick of batch) {
      tick.step = target([tick.step])[0] ?? tick.step;
      current.set(tick.index, tick.step);
    }
    const roll = rng.int(100);
    if (roll < 60) {
      const update = stepsUpdate(
        batch.map((b) => b.step),
        batch.map((b) => b.index),
        rng.chance(0.2) ? { status: RUN_STATUS.RUNNING } : {},
      );
      ops.push({ op: "frame", update: damage(update) });
    } else if (roll < 75) {
      const steps = [...current.entries()].sort((a, b) => a[0] - b[0]).map(([, step]) => step);
      const offset = rng.chance(0.3) ? rng.int(steps.length) : 0;
      const input = offset === 0 ? { steps } : { steps: steps.slice(offset), stepOffset: offset };
      ops.push({ op: "snapshot", input: damage(input) });
    } else if (roll < 82) {
      ops.push({ op: "steps", steps: damage(batch.map((b) => b.step)) });
    } else if (roll < 90) {
      ops.push({ op: "runStatus", input: damage({ status: rng.pick(Object.values(RUN_STATUS)), fullyIdle: rng.chance(0.5) }) });
    } else if (roll < 94) {
      ops.push({ op: "reconnect" });
    } else {
      // An argument of the wrong type altogether.
      const odd = oddValue(rng);
      ops.push(
        rng.pick<TrackerOp>([
          { op: "snapshot", input: odd },
          { op: "frame", update: odd },
          { op: "runStatus", input: odd },
          { op: "steps", steps: odd },
        ]),
      );
    }
  }
  return ops;
}

/**
 * Damage aimed at the fields the tracker reads: token counts, step indices,
 * the type of a waiting step, an interaction's echo. Random paths reach them
 * too rarely.
 */
function aim(rng: Rng, step: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(step);
  const metadata = (typeof out["metadata"] === "object" && out["metadata"] !== null ? out["metadata"] : {}) as Record<string, unknown>;
  switch (rng.int(6)) {
    case 0:
      metadata["modelUsage"] = {
        model: "MODEL_A",
        inputTokens: rng.pick<unknown>(["999999999999999", 1e21, 1e308, "12", -3, 1.5]),
        outputTokens: rng.pick<unknown>(["999999999999999", 1e21, 1e308, "1e21", "9007199254740993"]),
      };
      out["metadata"] = metadata;
      break;
    case 1: {
      const info = (metadata["sourceTrajectoryStepInfo"] ?? {}) as Record<string, unknown>;
      info["stepIndex"] = rng.pick<unknown>([-1, "-5", "12345678901234567890", 2 ** 53, 2 ** 53 + 2, 1.5, "7"]);
      metadata["sourceTrajectoryStepInfo"] = info;
      out["metadata"] = metadata;
      break;
    }
    case 2:
      delete out["type"];
      break;
    case 3:
      out["completedInteractions"] = [{ response: rng.chance(0.5) ? nested(rng.pick([100, 5000])) : { allow: true, ["__proto__"]: 1 } }];
      break;
    case 4:
      out["status"] = rng.pick(Object.values(STEP_STATUS));
      break;
    default:
      out["requestedInteraction"] = rng.pick<unknown>([{}, { permission: null }, { askQuestion: { questions: "many" } }, { unknownGate: { x: 1 } }]);
  }
  return out;
}

function apply(tracker: TrajectoryTracker, op: TrackerOp): MapperEvent[] {
  // The tracker's entry points are called with whatever JSON the op holds, as a careless caller would.
  switch (op.op) {
    case "frame":
      return tracker.applyStreamUpdate(op.update as StreamUpdate);
    case "snapshot":
      return tracker.applySnapshot(op.input as { steps: unknown[] });
    case "steps":
      return tracker.applySteps(op.steps as unknown[]);
    case "runStatus":
      return tracker.applyRunStatus(op.input as { status?: string });
    case "reconnect":
      return tracker.markReconnected();
  }
}

function run(ops: TrackerOp[]): "ok" | "typed_error" {
  const tracker = createTrajectoryTracker({ conversationId: CID });
  const open = new Set<string>();
  let typed = false;
  ops.forEach((op, i) => {
    let events: MapperEvent[];
    try {
      events = apply(tracker, op);
    } catch (error) {
      if (!(error instanceof AgyBridgeError)) throw error;
      typed = true;
      return;
    }
    invariant(Array.isArray(events), () => `op ${i} (${op.op}) returned no event list`);
    for (const event of events) {
      const parsed = MapperEventSchema.safeParse(event);
      invariant(
        parsed.success,
        () =>
          `op ${i} (${op.op}): a ${describeType(event)} event fails the event schema: ${parsed.error?.issues[0]?.message ?? ""} at ${parsed.error?.issues[0]?.path.join(".") ?? ""}`,
      );
      let text: string | undefined;
      try {
        text = JSON.stringify(event);
      } catch (error) {
        invariant(false, () => `op ${i} (${op.op}): JSON.stringify of a ${event.type} event throws: ${error instanceof Error ? error.message : String(error)}`);
      }
      invariant(typeof text === "string", () => `op ${i}: a ${event.type} event serialises to nothing`);
      if (event.type === "interaction_requested") {
        invariant(!open.has(event.interactionId), () => `op ${i} (${op.op}): interaction ${event.interactionId} requested twice without being resolved`);
        open.add(event.interactionId);
      } else if (event.type === "interaction_resolved") {
        open.delete(event.interactionId);
      }
    }
    for (const pending of tracker.pendingInteractions()) {
      // What the tracker keeps of the step (settled steps keep no raw version).
      const kept = tracker.stepState(pending.trajectoryId, pending.stepIndex);
      const status = kept === undefined ? undefined : `CORTEX_STEP_STATUS_${kept.status}`;
      invariant(
        kept === undefined || kept.status === "" || status === STEP_STATUS.WAITING,
        () => `op ${i} (${op.op}): step ${pending.stepIndex} is ${status} but interaction ${pending.interactionId} is still pending`,
      );
    }
  });
  return typed ? "typed_error" : "ok";
}

function describeType(event: unknown): string {
  const type = typeof event === "object" && event !== null ? (event as { type?: unknown }).type : undefined;
  return typeof type === "string" ? type : "untyped";
}

export const trackerCampaign: Campaign<TrackerOp[]> = {
  name: "trajectory tracker",
  generate,
  run,
  *shrink(ops) {
    for (let i = ops.length - 1; i >= 0; i--) yield [...ops.slice(0, i), ...ops.slice(i + 1)];
  },
};
