/**
 * Builds trajectory steps in agy's real wire shapes (poll projection: every
 * field, as `GetCascadeTrajectorySteps` returns them). Shapes follow the
 * agy 1.0.10 captures: int64 as strings, int32 as numbers, zero values
 * omitted, `stepIndex` absent at 0 and on USER_INPUT.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { STEP_SOURCE, STEP_STATUS, STEP_TYPE, STOP_REASON } from "../../protocol/wire-names.js";

import type { JsonObject } from "../../protocol/json.js";
export type { JsonObject };

/** One step as the engine stores it (the poll projection). */
export interface WireStep extends JsonObject {
  type: string;
  status: string;
  metadata: JsonObject;
}

const SOURCE = STEP_SOURCE;

/** Where a step sits and who made it. */
export interface StepPlace {
  cascadeId: string;
  trajectoryId: string;
  stepIndex: number;
  /** The planner invocation that produced the step (0 is omitted on the wire). */
  metadataIndex: number;
  executionId: string;
  model: string;
  /** RFC 3339 stamp for "now". */
  stamp: string;
}

const TOOL_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** An 8-character tool call id like agy's (`cbawg2v8`). */
export function newToolCallId(): string {
  const bytes = randomBytes(8);
  let id = "";
  for (const byte of bytes) id += TOOL_ID_ALPHABET[byte % TOOL_ID_ALPHABET.length];
  return id;
}

/** An opaque stand-in for the model's thinking signature (large base64 on the real wire). */
export function newThinkingSignature(): string {
  return randomBytes(96).toString("base64");
}

export function stepInfo(place: StepPlace, options: { userInput?: boolean } = {}): JsonObject {
  const info: JsonObject = { trajectoryId: place.trajectoryId };
  if (options.userInput !== true && place.stepIndex !== 0) info.stepIndex = place.stepIndex;
  if (options.userInput !== true && place.metadataIndex !== 0) info.metadataIndex = place.metadataIndex;
  info.cascadeId = place.cascadeId;
  return info;
}

function transitions(status: string, stamp: string): JsonObject {
  return { statusTransitions: [{ updatedStatus: status, timestamp: stamp }] };
}

/**
 * The metadata of a step the system writes whole (CONVERSATION_HISTORY,
 * ERROR_MESSAGE, CHECKPOINT): created, started and completed at once, its
 * first recorded status `firstStatus`, `modelUsage` after `source` when given.
 */
function systemStepMetadata(place: StepPlace, firstStatus: string, usage?: JsonObject): JsonObject {
  return {
    createdAt: place.stamp,
    startedAt: place.stamp,
    completedAt: place.stamp,
    source: SOURCE.SYSTEM,
    ...(usage === undefined ? {} : { modelUsage: usage }),
    executionId: place.executionId,
    sourceTrajectoryStepInfo: stepInfo(place),
    internalMetadata: transitions(firstStatus, place.stamp),
  };
}

/** Appends a status transition and sets the status (poll-only `internalMetadata`). */
export function moveStep(step: WireStep, status: string, stamp: string): void {
  step.status = status;
  const internal = (step.metadata.internalMetadata ??= { statusTransitions: [] }) as JsonObject;
  const list = (internal.statusTransitions ??= []) as JsonObject[];
  list.push({ updatedStatus: status, timestamp: stamp });
}

export function userInputStep(place: StepPlace, text: string): WireStep {
  return {
    type: STEP_TYPE.USER_INPUT,
    status: STEP_STATUS.DONE,
    metadata: {
      createdAt: place.stamp,
      source: SOURCE.USER,
      executionId: place.executionId,
      sourceTrajectoryStepInfo: stepInfo(place, { userInput: true }),
      internalMetadata: transitions(STEP_STATUS.DONE, place.stamp),
    },
    userInput: {
      items: [{ text }],
      userResponse: text,
      activeUserState: {},
      userConfig: {
        plannerConfig: {
          conversational: { agenticMode: false },
          toolConfig: {
            runCommand: {
              autoCommandConfig: { autoExecutionPolicy: "CASCADE_COMMANDS_AUTO_EXECUTION_OFF" },
              enableTerminalSandbox: false,
            },
            notifyUser: { artifactReviewMode: "ARTIFACT_REVIEW_MODE_ALWAYS" },
          },
          planModel: place.model,
          useAiCredits: false,
        },
      },
    },
  };
}

export function conversationHistoryStep(place: StepPlace): WireStep {
  return {
    type: STEP_TYPE.CONVERSATION_HISTORY,
    status: STEP_STATUS.DONE,
    metadata: systemStepMetadata(place, STEP_STATUS.PENDING),
    conversationHistory: {},
  };
}

/** Token counts a planner reports; characters are turned into tokens at about 4 per token. */
export interface UsageShape {
  /** Characters of the visible answer (or of the tool call a dispatching planner makes). */
  responseChars: number;
  /** Characters of streamed thinking; models think even when they stream none, so this only raises the count. */
  thinkingChars?: number;
  /** A summariser call (CHECKPOINT): no thinking and no cache reads, as captured. */
  summariser?: boolean;
}

/**
 * `metadata.modelUsage` in the order agy writes it (agy 1.0.10 planner
 * captures): int64 counts as strings, output = thinking + response, and the
 * prompt-cache reads a real planner reports (spike-notes §4.2, §4.8).
 */
export function modelUsage(model: string, shape: UsageShape): JsonObject {
  const response = Math.max(1, Math.ceil(shape.responseChars / 4));
  const thinking = shape.summariser === true ? 0 : Math.max(Math.ceil(response / 2) + 8, Math.ceil((shape.thinkingChars ?? 0) / 4));
  return {
    model,
    inputTokens: String(900 + shape.responseChars),
    outputTokens: String(thinking + response),
    ...(thinking > 0 ? { thinkingOutputTokens: String(thinking) } : {}),
    responseOutputTokens: String(response),
    ...(shape.summariser === true ? {} : { cacheReadTokens: String(12_288 + (shape.responseChars % 4096)) }),
    apiProvider: "API_PROVIDER_GOOGLE_GEMINI",
    responseHeader: { sessionID: `-${BigInt.asUintN(63, randomBytes(8).readBigUInt64BE()).toString()}` },
    responseId: randomBytes(12).toString("base64url").slice(0, 23),
  };
}

/** What went wrong, in a failed step's `error` (agy's `CortexErrorDetails`, spike-notes §11). */
export interface ErrorDetailSpec {
  /** The sentence shown to the user (`userErrorMessage`). */
  message: string;
  shortError?: string | undefined;
  modelErrorMessage?: string | undefined;
  fullError?: string | undefined;
}

/** `step.error` / `errorMessage.error` as agy's schema defines it (zero values omitted). */
export function errorDetails(spec: ErrorDetailSpec): JsonObject {
  return {
    userErrorMessage: spec.message,
    ...(spec.modelErrorMessage !== undefined ? { modelErrorMessage: spec.modelErrorMessage } : {}),
    shortError: spec.shortError ?? spec.message,
    fullError: spec.fullError ?? spec.message,
  };
}

/**
 * An ERROR_MESSAGE step: a failure reported as its own step (agy's schema,
 * type 17; body `errorMessage { error, shouldShowUser }`, spike-notes §11).
 */
export function errorMessageStep(place: StepPlace, detail: ErrorDetailSpec, shouldShowUser: boolean): WireStep {
  return {
    type: STEP_TYPE.ERROR_MESSAGE,
    status: STEP_STATUS.DONE,
    metadata: systemStepMetadata(place, STEP_STATUS.DONE),
    errorMessage: { error: errorDetails(detail), ...(shouldShowUser ? { shouldShowUser: true } : {}) },
  };
}

/** A planner that starts GENERATING: `modifiedResponse` grows later, `response` only at DONE. */
export function generatingPlannerStep(place: StepPlace): WireStep {
  return {
    type: STEP_TYPE.PLANNER_RESPONSE,
    status: STEP_STATUS.GENERATING,
    metadata: {
      stepGenerationVersion: 1,
      createdAt: place.stamp,
      viewableAt: place.stamp,
      source: SOURCE.MODEL,
      generatorModel: place.model,
      requestedModel: { model: place.model },
      executionId: place.executionId,
      sourceTrajectoryStepInfo: stepInfo(place),
      internalMetadata: transitions(STEP_STATUS.GENERATING, place.stamp),
    },
    plannerResponse: { messageId: `bot-${randomUUID()}` },
  };
}

/** What a model tool call looks like in `metadata.toolCall` and `plannerResponse.toolCalls[]`. */
export interface ToolCallSpec {
  name: string;
  /** The model's arguments in the model's order (becomes `argumentsJson` and `argumentsOrder`). */
  args: JsonObject;
  toolAction: string;
  toolSummary: string;
}

export function toolCallObject(id: string, spec: ToolCallSpec): JsonObject {
  return {
    id,
    name: spec.name,
    argumentsJson: JSON.stringify({ ...spec.args, toolAction: spec.toolAction, toolSummary: spec.toolSummary }),
    thinkingSignature: newThinkingSignature(),
    originalName: spec.name,
  };
}

/** A planner that only dispatches a tool: no text; the poll projection lists its `toolCalls`. */
export function dispatchingPlannerStep(place: StepPlace, toolCall: JsonObject): WireStep {
  const step = generatingPlannerStep(place);
  moveStep(step, STEP_STATUS.DONE, place.stamp);
  Object.assign(step.metadata, {
    finishedGeneratingAt: place.stamp,
    startedAt: place.stamp,
    completedAt: place.stamp,
  });
  step.metadata = reorderModelUsage(step.metadata, modelUsage(place.model, { responseChars: JSON.stringify(toolCall).length }));
  step.plannerResponse = {
    messageId: (step.plannerResponse as JsonObject).messageId,
    toolCalls: [toolCall],
    stopReason: STOP_REASON.STOP_PATTERN,
  };
  return step;
}

/** Puts `modelUsage` after `source`, where agy writes it. */
export function reorderModelUsage(metadata: JsonObject, usage: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (key === "modelUsage") continue;
    out[key] = value;
    if (key === "source") out.modelUsage = usage;
  }
  return out;
}

/** Common metadata of a tool step (RUN_COMMAND, ASK_QUESTION, LIST_DIRECTORY, ...), created PENDING. */
export function toolStepMetadata(place: StepPlace, toolCall: JsonObject, spec: ToolCallSpec): JsonObject {
  return {
    stepGenerationVersion: 1,
    createdAt: place.stamp,
    viewableAt: place.stamp,
    finishedGeneratingAt: place.stamp,
    lastCompletedChunkAt: place.stamp,
    startedAt: place.stamp,
    source: SOURCE.MODEL,
    toolCall,
    argumentsOrder: [...Object.keys(spec.args), "toolAction", "toolSummary"],
    generatorModel: place.model,
    requestedModel: { model: place.model },
    executionId: place.executionId,
    toolCallOutputTokens: 20 + Math.ceil(JSON.stringify(spec.args).length / 4),
    sourceTrajectoryStepInfo: stepInfo(place),
    internalMetadata: transitions(STEP_STATUS.PENDING, place.stamp),
    toolSummary: spec.toolSummary,
    toolAction: spec.toolAction,
  };
}

/** The model agy's checkpoint summariser reports (spike-notes §3.10, §4.3). */
const SUMMARISER_MODEL = "MODEL_PLACEHOLDER_M50";

export function checkpointStep(place: StepPlace, userIntent: string, userRequests: string[]): WireStep {
  return {
    type: STEP_TYPE.CHECKPOINT,
    status: STEP_STATUS.DONE,
    metadata: systemStepMetadata(place, STEP_STATUS.PENDING, modelUsage(SUMMARISER_MODEL, { responseChars: userIntent.length, summariser: true })),
    checkpoint: {
      intentOnly: true,
      includedStepIndexEnd: place.stepIndex,
      userIntent,
      userRequests,
      renderLatestCheckpoint: true,
      renderUserMessageStepIndex: "0",
    },
  };
}
