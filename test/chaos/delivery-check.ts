/**
 * Every answer delivered exactly once, to the step it was meant for, read
 * from the simulator's own record: each settled gate step's
 * `completedInteractions` (src/sim/engine/gated-steps.ts records the answer
 * as sent, answer-echo.ts) — and who the session says decided it.
 */
import type { AnswerResult } from "../../src/session/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import type { SimServer } from "../../src/sim/index.js";
import { STEP_STATUS } from "../../src/protocol/wire-names.js";
import type { GateKey } from "./fault-plan.js";
import { echoMatches, gateKeyOfStep } from "./chaos-script.js";

export interface AnswerRecord {
  key: GateKey;
  interactionId: string;
  conversationId: string;
  stepIndex: number;
  result: AnswerResult;
}

/**
 * The problems with how answers landed, one sentence each. `complete`: the
 * run played to its end, so every gate must have been answered.
 */
export function checkRecord(sim: SimServer, answers: readonly AnswerRecord[], complete: boolean): string[] {
  const problems: string[] = [];
  const deliveredTo = new Map<string, AnswerRecord>();
  for (const answer of answers) {
    const r = answer.result;
    if (r.result !== "delivered") continue;
    const step = sim.engine.conversation(answer.conversationId)?.steps[r.stepIndex];
    const key = gateKeyOfStep(step);
    if (key !== answer.key)
      problems.push(`the ${answer.key} answer (step ${answer.stepIndex}) was delivered to step ${r.stepIndex}, a ${key ?? "non-gate"} step`);
    const at = `${answer.conversationId}/${r.stepIndex}`;
    if (deliveredTo.has(at)) problems.push(`step ${r.stepIndex} (${answer.key}) got two delivered answers`);
    deliveredTo.set(at, answer);
  }
  for (const conv of sim.engine.conversations()) {
    conv.steps.forEach((step, index) => {
      const key = gateKeyOfStep(step);
      if (key === undefined) return;
      const echoes = Array.isArray(step["completedInteractions"]) ? (step["completedInteractions"] as { response?: unknown }[]) : [];
      if (step.status === STEP_STATUS.ERROR) {
        if (echoes.length > 0) problems.push(`step ${index} (${key}) timed out but records an answer`);
        return;
      }
      if (echoes.length === 0) {
        if (complete) problems.push(`step ${index} (${key}) was never answered (status ${String(step.status)})`);
        return;
      }
      if (echoes.length > 1) problems.push(`step ${index} (${key}) records ${echoes.length} answers`);
      if (!echoMatches(key, echoes[echoes.length - 1]?.response)) {
        problems.push(`step ${index} (${key}) records an answer meant for another gate: ${JSON.stringify(echoes[echoes.length - 1]?.response)}`);
      }
    });
  }
  return problems;
}

/**
 * `decidedBy` names the supervisor on exactly the resolutions its answers
 * caused: every verdict except the gates a person answered in the TUI
 * (`byPerson`, "conversationId/stepIndex"); never on a timeout or a stop.
 */
export function checkAttribution(log: readonly MapperEvent[], byPerson: ReadonlySet<string>, decidedBy: string): string[] {
  const problems: string[] = [];
  for (const event of log) {
    if (event.type !== "interaction_resolved") continue;
    const verdict = event.outcome === "approved" || event.outcome === "denied" || event.outcome === "answered";
    const ours = verdict && !byPerson.has(`${event.conversationId}/${event.stepIndex}`);
    if (ours && event.decidedBy !== decidedBy)
      problems.push(`the resolution of step ${event.stepIndex} (${event.outcome}) does not say the supervisor decided it`);
    if (!ours && event.decidedBy !== undefined)
      problems.push(
        `the resolution of step ${event.stepIndex} (${event.outcome}) says ${event.decidedBy} decided it, but ${verdict ? "a person answered in the TUI" : "nobody answered it"}`,
      );
  }
  return problems;
}
