/**
 * A SupervisedSession whose events the test pushes and whose answers it
 * scripts: the HTTP layer is tested against it; the real session runner is
 * tested end to end elsewhere (serve-e2e.test.ts).
 */
import type { MapperEvent } from "../../../src/mapper/index.js";
import type { AnswerResult, InteractionAction, InterruptResult, TurnResult } from "../../../src/server/contract.js";
import type { SupervisedSession } from "../../../src/server/session-hub.js";

export interface ScriptedSession extends SupervisedSession {
  push(event: MapperEvent): void;
  /** Every respond() call the session received, in order. */
  readonly answers: { interactionId: string; action: InteractionAction }[];
  readonly turns: string[];
  closed: boolean;
}

export function createScriptedSession(
  conversationId: string,
  script: { respond?: (interactionId: string, action: InteractionAction) => Promise<AnswerResult> } = {},
): ScriptedSession {
  const backlog: MapperEvent[] = [];
  const waiters = new Set<() => void>();
  const answers: ScriptedSession["answers"] = [];
  const turns: string[] = [];
  const resolved = new Set<string>();
  const session: ScriptedSession = {
    conversationId,
    answers,
    turns,
    closed: false,
    push(event) {
      backlog.push(event);
      for (const wake of waiters) wake();
    },
    async *events({ signal }) {
      let next = 0;
      while (!signal.aborted && !session.closed) {
        if (next < backlog.length) {
          yield backlog[next++] as MapperEvent;
          continue;
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            signal.removeEventListener("abort", wake);
            resolve();
          };
          waiters.add(wake);
          signal.addEventListener("abort", wake, { once: true });
        });
      }
    },
    async respond(interactionId, action) {
      answers.push({ interactionId, action });
      if (script.respond !== undefined) return script.respond(interactionId, action);
      if (resolved.has(interactionId)) return { result: "already_resolved", stepIndex: 6 };
      resolved.add(interactionId);
      return { result: "delivered", stepIndex: 6 };
    },
    async sendTurn(text): Promise<TurnResult> {
      turns.push(text);
      return { result: "delivered", reason: "a new USER_INPUT step appeared" };
    },
    async interrupt(): Promise<InterruptResult> {
      return { result: "cancelled" };
    },
    async close() {
      session.closed = true;
      for (const wake of waiters) wake();
    },
  };
  return session;
}

/** A permission request event as the mapper emits it. */
export function permissionRequested(conversationId: string, stepIndex: number, command: string): MapperEvent {
  return {
    type: "interaction_requested",
    conversationId,
    trajectoryId: "traj-1",
    stepIndex,
    interactionId: `int_${stepIndex.toString(16).padStart(16, "0")}`,
    stepType: "RUN_COMMAND",
    callId: `agy_call_traj-1_${stepIndex}`,
    request: { kind: "permission", action: "command", target: command, description: `run ${command}` },
  };
}

export function userMessage(conversationId: string, text: string): MapperEvent {
  return { type: "user_message", conversationId, trajectoryId: "traj-1", stepIndex: 0, text } as MapperEvent;
}
