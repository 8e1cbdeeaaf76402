/**
 * The step mapper: agy trajectory steps in, documented events out. Pure.
 */
export * from "./events.js";
export { createTrajectoryTracker } from "./trajectory-tracker.js";
export type {
  PendingInteraction,
  RunStatusInput,
  SnapshotInput,
  StepState,
  TrajectoryTracker,
  TrajectoryTrackerOptions,
} from "./tracker-api.js";
export { callIdFor, interactionIdFor, messageIdFor } from "./ids.js";
export { fnv1a64 } from "./hash.js";
export { interactionAnswer } from "./interaction-answer.js";
export { currentWaitingFor, waitingForRequest, waitingForStep } from "./waiting-for.js";
export type {
  AnswerTarget,
  InteractionDecision,
  PermissionDecision,
  QuestionChoice,
  QuestionDecision,
} from "./interaction-answer.js";
