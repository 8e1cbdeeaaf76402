/**
 * One delivery per interaction: the first answer to an id runs, a second one
 * given meanwhile waits for it and reports `already_resolved` (or runs
 * itself when the first failed), and once an answer went through every
 * later one is `already_resolved` at once, without asking agy again.
 */
import type { AnswerResult } from "./types.js";

export class AnswerOnce {
  readonly #settled = new Map<string, AnswerResult>();
  readonly #inFlight = new Map<string, Promise<AnswerResult>>();

  /** Runs `attempt` for `interactionId` unless an answer to it went through or is on its way. */
  run(interactionId: string, attempt: () => Promise<AnswerResult>): Promise<AnswerResult> {
    const settled = this.#settled.get(interactionId);
    if (settled !== undefined) return Promise.resolve(alreadyResolved(settled));
    const running = this.#inFlight.get(interactionId);
    if (running !== undefined) return running.then(alreadyResolved, () => this.run(interactionId, attempt));
    const answer = attempt().then((result) => {
      if (result.result === "delivered" || result.result === "already_resolved") this.#settled.set(interactionId, result);
      return result;
    });
    this.#inFlight.set(interactionId, answer);
    void answer.finally(() => this.#inFlight.delete(interactionId)).catch(() => undefined);
    return answer;
  }
}

function alreadyResolved(result: AnswerResult): AnswerResult {
  if (result.result === "delivered" || result.result === "already_resolved") return { result: "already_resolved", stepIndex: result.stepIndex };
  return result;
}
