/**
 * Loose zod schemas for what agy sends. We have no `.proto` for agy, and its
 * step payloads are large and change between versions, so we validate only the
 * fields agy-bridge relies on and keep every other field untouched
 * (`looseObject`). Proto-JSON rules apply: zero values are omitted (a step at
 * index 0 has no `stepIndex`), int64 values are strings, enums are names.
 */
import { z } from "zod";

/** int32 fields come as numbers, but accept digit strings too (agy 1.0.10 emits both styles for ints). */
export const WireIntSchema = z.union([z.number().int(), z.string().regex(/^-?\d+$/)]);

export const StepInfoSchema = z.looseObject({
  trajectoryId: z.string().optional(),
  stepIndex: WireIntSchema.optional(),
  cascadeId: z.string().optional(),
  metadataIndex: WireIntSchema.optional(),
});

export const StepMetadataSchema = z.looseObject({
  createdAt: z.string().optional(),
  executionId: z.string().optional(),
  sourceTrajectoryStepInfo: StepInfoSchema.optional(),
});

/**
 * One well-formed trajectory step. `type` is `CORTEX_STEP_TYPE_*`, `status` is
 * `CORTEX_STEP_STATUS_*`; the typed body sits under the lowerCamelCase form of
 * the type suffix (`runCommand`, `plannerResponse`, ...).
 *
 * The RPC client checks only the envelope of a snapshot or frame and hands
 * each step through as it came (one bad step must not hide the others), so a
 * step typed `Step` may still break this shape: the tracker checks every step
 * itself; other readers use the `protocol/json` readers, or `StepSchema`.
 */
export const StepSchema = z.looseObject({
  type: z.string().optional(),
  status: z.string().optional(),
  metadata: StepMetadataSchema.optional(),
});

export type Step = z.infer<typeof StepSchema>;

/** `GetCascadeTrajectorySteps` response. A missing `steps` is an empty conversation. */
export const TrajectoryStepsResponseSchema = z.looseObject({
  steps: z.array(StepSchema).optional(),
});

export const StepsUpdateSchema = z.looseObject({
  indices: z.array(WireIntSchema).optional(),
  steps: z.array(StepSchema).optional(),
  totalLength: WireIntSchema.optional(),
});

export const TrajectoryUpdateSchema = z.looseObject({
  stepsUpdate: StepsUpdateSchema.optional(),
  status: z.string().optional(),
  fullyIdle: z.boolean().optional(),
});

/** The inner `update` of one `StreamAgentStateUpdates` data frame. */
export const StreamUpdateSchema = z.looseObject({
  conversationId: z.string().optional(),
  trajectoryId: z.string().optional(),
  status: z.string().optional(),
  fullyIdle: z.boolean().optional(),
  mainTrajectoryUpdate: TrajectoryUpdateSchema.optional(),
});

export type StreamUpdate = z.infer<typeof StreamUpdateSchema>;

export const ConversationMetadataResponseSchema = z.looseObject({
  metadata: z
    .looseObject({
      rootConversationId: z.string().optional(),
    })
    .optional(),
});

export const TrajectorySummarySchema = z.looseObject({
  trajectoryId: z.string().optional(),
  status: z.string().optional(),
  stepCount: WireIntSchema.optional(),
  lastModifiedTime: z.string().optional(),
  lastUserInputTime: z.string().optional(),
  trajectoryType: z.string().optional(),
  waitingSteps: z.array(z.looseObject({ step: StepSchema.optional(), stepIndex: WireIntSchema.optional() })).optional(),
});

export const AllTrajectoriesResponseSchema = z.looseObject({
  trajectorySummaries: z.record(z.string(), TrajectorySummarySchema).optional(),
});

export const TrajectoryResponseSchema = z.looseObject({
  trajectory: z
    .looseObject({
      trajectoryId: z.string().optional(),
      cascadeId: z.string().optional(),
      steps: z.array(StepSchema).optional(),
    })
    .optional(),
  status: z.string().optional(),
  numTotalSteps: WireIntSchema.optional(),
});

export const AvailableModelsResponseSchema = z.looseObject({
  response: z
    .looseObject({
      models: z.record(z.string(), z.looseObject({ model: z.string().optional() })).optional(),
    })
    .optional(),
});

/** Any JSON object: the answer of calls whose body agy leaves empty (`{}`). */
export const JsonObjectSchema = z.looseObject({});

/** `GetConversationMetadata` answer. */
export type ConversationMetadataResponse = z.infer<typeof ConversationMetadataResponseSchema>;
/** `GetCascadeTrajectory` answer. */
export type TrajectoryResponse = z.infer<typeof TrajectoryResponseSchema>;
/** `GetAllCascadeTrajectories` answer. */
export type AllTrajectoriesResponse = z.infer<typeof AllTrajectoriesResponseSchema>;
/** The unwrapped `response` of `GetAvailableModels`. */
export type ModelCatalog = NonNullable<z.infer<typeof AvailableModelsResponseSchema>["response"]>;
/** Any JSON object (answers agy leaves as `{}`). */
export type JsonObject = z.infer<typeof JsonObjectSchema>;
