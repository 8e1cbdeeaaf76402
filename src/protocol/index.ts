/**
 * `agy-bridge/protocol`: agy's wire, for tools that work below the client —
 * the Connect envelope codec, the method table, wire enum names, JSON readers
 * and the loose zod schemas of responses. These follow agy's wire and change
 * when it does; most programs want the root export instead.
 */
export {
  DEFAULT_MAX_FRAME_BYTES,
  EnvelopeDecoder,
  encodeEnvelope,
  encodeJsonEnvelope,
  FLAG_COMPRESSED,
  FLAG_DATA,
  FLAG_END_STREAM,
  HEADER_BYTES,
  type Envelope,
} from "./envelope.js";
export { asIndex, asObject, asString, isObject } from "./json.js";
export {
  DEFAULT_TIMEOUTS_MS,
  METHODS,
  methodPath,
  SERVICE_NAME,
  type MethodInfo,
  type MethodKind,
  type MethodName,
  type TimeoutClass,
} from "./methods.js";
export {
  RUN_STATUS,
  STEP_SOURCE,
  STEP_STATUS,
  STEP_STATUS_PREFIX,
  STEP_TYPE,
  STEP_TYPE_PREFIX,
  type RunStatusName,
  type StepStatusName,
  type StepTypeName,
} from "./wire-names.js";
export {
  AllTrajectoriesResponseSchema,
  AvailableModelsResponseSchema,
  ConversationMetadataResponseSchema,
  JsonObjectSchema,
  StepInfoSchema,
  StepMetadataSchema,
  StepSchema,
  StepsUpdateSchema,
  StreamUpdateSchema,
  TrajectoryResponseSchema,
  TrajectoryStepsResponseSchema,
  TrajectorySummarySchema,
  TrajectoryUpdateSchema,
  WireIntSchema,
  type AllTrajectoriesResponse,
  type ConversationMetadataResponse,
  type JsonObject,
  type ModelCatalog,
  type Step,
  type StreamUpdate,
  type TrajectoryResponse,
} from "./wire-schemas.js";
