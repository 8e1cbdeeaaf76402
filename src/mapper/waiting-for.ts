/**
 * What a waiting session waits for (`waitingFor`, docs/events.md), read from
 * the open interaction's request: the same word on every front door.
 */
import type { InteractionRequest, WaitingFor } from "./events.js";
import { interactionRequest } from "./interaction-spec.js";
import { isObject } from "./step-access.js";

/**
 * `file` for agy's file gate (`filePermission`, or a `permission` whose
 * resource action is `file`), `permission` for the other allow/deny gates,
 * `question` for `askQuestion`, `tui_prompt` for a gate only the TUI answers
 * (kind `other`). `background_task` never comes from a request.
 */
export function waitingForRequest(request: InteractionRequest): WaitingFor {
  switch (request.kind) {
    case "permission":
      return request.variant === "filePermission" || request.action === "file" ? "file" : "permission";
    case "question":
      return "question";
    case "other":
      return "tui_prompt";
  }
}

/**
 * What a session waits for now, folded from its events: nothing unless its
 * last status is `waiting`; then the oldest request still open for a person
 * (a later edge never comes while one stays open, so the edge can be stale),
 * else what the `waiting` edge itself said (a request the policy answers).
 */
export function currentWaitingFor(status: string, open: Iterable<{ request: InteractionRequest }>, edge: WaitingFor | undefined): WaitingFor | undefined {
  if (status !== "waiting") return undefined;
  for (const first of open) return waitingForRequest(first.request);
  return edge;
}

/**
 * What a step waiting on the user asks for, read from its
 * `requestedInteraction` (e.g. a `waitingSteps[].step` of
 * `GetAllCascadeTrajectories`, spike-notes §10.4); undefined when the step
 * carries no such block.
 */
export function waitingForStep(step: unknown): WaitingFor | undefined {
  if (!isObject(step) || !isObject(step["requestedInteraction"])) return undefined;
  return waitingForRequest(interactionRequest(step, () => undefined));
}
