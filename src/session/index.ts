/**
 * The session runner: attach to an attended agy conversation and supervise
 * it from code — follow it as events, type turns, answer prompts, interrupt.
 */
export { AgySession } from "./agy-session.js";
export type {
  AgySession as AgySessionApi,
  AgyVersionState,
  LocateVersion,
  AnswerOptions,
  AnswerResult,
  AnswerVia,
  ApproveOptions,
  AttachOptions,
  ClientFactory,
  DenyOptions,
  EventsOptions,
  InterruptResult,
  Locate,
  LocatePane,
  PendingSummary,
  ProbeKind,
  ReadMode,
  SessionInteractions,
  TurnDriver,
} from "./types.js";
export type { ScreenModel } from "../tmux/screen-types.js";
export type { TurnDeliveryResult } from "../tmux/types.js";
export { answerPayload, type Verdict } from "./interaction-delivery.js";
export { rotationTarget, isChildConversation } from "./rotation.js";
export { displayNameFor } from "./model-names.js";
export { runPolicy } from "./policy-runner.js";
export { createSummariesBoard, type SummariesBoard, type SummariesReading } from "./summaries-board.js";
export type { PolicyOutcome, PolicyRun, PolicyRunOptions } from "./policy-runner.js";
export { VerdictSchema, parseVerdict, instructionAllowed, MAX_VERDICT_TEXT } from "./verdict.js";
export type { Verdict as AnswerVerdict, VerdictAction, ParsedVerdict } from "./verdict.js";
export { createLocalSessionSource } from "./local-session-source.js";
export { createMachineSessionSource, type MachineSessionsOptions } from "./machine-sessions.js";
export type {
  DiscoveryFeed,
  LocalSessionSource,
  LocalSessionSourceOptions,
  SessionOffer,
  SessionPlace,
  SessionSource,
} from "./local-session-source.js";
export { createInteractionLedger, personMayAnswer } from "./interaction-ledger.js";
export type { InteractionLedger, InteractionLedgerOptions, LedgerChange, LedgerEntry, LedgerSnapshot, OpenRequest } from "./interaction-ledger.js";
export { respond } from "./respond.js";
export { createSupervisor } from "./supervisor.js";
export type { Described, DropReason, Following, Supervised, Supervisor, SupervisorOptions } from "./supervisor.js";
export type { Answerable, AnsweredRecord, RespondOptions } from "./respond.js";
export { describeAnswer, describeAnswerSentence } from "./answer-text.js";
export type { AnswerPlace, DescribedAnswer } from "./answer-text.js";
