/**
 * Typed request builders, one per method. They produce proto-JSON bodies
 * (camelCase keys, absent optional fields omitted) and make the wrong shapes
 * unrepresentable: `trajectoryId` and `stepIndex` can only go inside
 * `interaction`, because agy's proto-JSON parser silently drops unknown
 * top-level fields and then answers "input not registered" (spike-notes §3.5).
 *
 * Inputs always say `conversationId`. Several methods name the same id
 * `cascadeId` on the wire; that spelling lives only here.
 */

/** A JSON request body. */
export type JsonBody = Record<string, unknown>;

/** agy's default `StartCascade` source (agy 1.0.10). */
export const CLI_TRAJECTORY_SOURCE = "CORTEX_TRAJECTORY_SOURCE_CLI";

/** The step an interaction answers: from the WAITING step's `metadata.sourceTrajectoryStepInfo`. */
export interface InteractionTarget {
  conversationId: string;
  trajectoryId: string;
  stepIndex: number;
}

export interface PermissionAnswer {
  allow: boolean;
  /** A permission scope name, e.g. `PERMISSION_SCOPE_ONCE` (newer builds). */
  scope?: string;
  /** On a deny, an instruction for the model (newer builds). */
  userDenyInstruction?: string;
}

/** Confirms or refuses a `runCommand` gate (agy's schema, spike-notes §11). */
export interface RunCommandAnswer {
  confirm: boolean;
  /** The command line the gate proposed; one IDE build wanted it echoed back (spike-notes §10.7). */
  proposedCommandLine?: string;
  /** The command line to run; one IDE build wanted it echoed back (spike-notes §10.7). */
  submittedCommandLine?: string;
}

/** Allows or refuses a `filePermission` gate (agy's schema, spike-notes §11). */
export interface FilePermissionAnswer {
  allow: boolean;
  /** A scope name, sent as given (the schema names the field, not its values). */
  scope?: string;
}

export interface QuestionResponse {
  /** The question text, verbatim. */
  question: string;
  /** Option ids are `"1".."N"`, not option text (agy 1.0.10, live). */
  selectedOptionIds: string[];
  writeInResponse?: string;
  skipped?: boolean;
}

export interface QuestionAnswer {
  /** One entry per question; an empty list declines. */
  responses: QuestionResponse[];
  cancelled?: boolean;
}

/** The answer variants of `interaction`, a proto oneof: exactly one is sent. */
interface InteractionAnswers {
  permission: PermissionAnswer;
  askQuestion: QuestionAnswer;
  runCommand: RunCommandAnswer;
  filePermission: FilePermissionAnswer;
}

type OnlyAnswer<K extends keyof InteractionAnswers> = { [P in K]: InteractionAnswers[P] } & {
  [P in Exclude<keyof InteractionAnswers, K>]?: never;
};

export type HandleInteractionInput = InteractionTarget &
  (OnlyAnswer<"permission"> | OnlyAnswer<"askQuestion"> | OnlyAnswer<"runCommand"> | OnlyAnswer<"filePermission">);

export function handleInteractionRequest(input: HandleInteractionInput): JsonBody {
  // stepIndex 0 is sent as 0 on purpose: proto-JSON parsers accept an explicit
  // zero, and always sending it keeps the body the same shape for every step.
  const interaction: JsonBody = { trajectoryId: input.trajectoryId, stepIndex: input.stepIndex };
  if (input.permission !== undefined) {
    interaction["permission"] = compact({
      allow: input.permission.allow,
      scope: input.permission.scope,
      userDenyInstruction: input.permission.userDenyInstruction,
    });
  } else if (input.runCommand !== undefined) {
    interaction["runCommand"] = compact({
      confirm: input.runCommand.confirm,
      proposedCommandLine: input.runCommand.proposedCommandLine,
      submittedCommandLine: input.runCommand.submittedCommandLine,
    });
  } else if (input.filePermission !== undefined) {
    interaction["filePermission"] = compact({ allow: input.filePermission.allow, scope: input.filePermission.scope });
  } else {
    interaction["askQuestion"] = compact({
      responses: input.askQuestion.responses.map((r) =>
        compact({
          question: r.question,
          selectedOptionIds: [...r.selectedOptionIds],
          writeInResponse: r.writeInResponse,
          skipped: r.skipped,
        }),
      ),
      cancelled: input.askQuestion.cancelled,
    });
  }
  return { cascadeId: input.conversationId, interaction };
}

export interface StepsInput {
  conversationId: string;
  /** Start at step N; the response's first item is then step N (newer builds). */
  stepOffset?: number;
}

export function stepsRequest(input: StepsInput): JsonBody {
  return compact({ cascadeId: input.conversationId, stepOffset: input.stepOffset });
}

export interface StreamInput {
  conversationId: string;
  /** Must be unique per live subscription: a repeat id closes the earlier one. */
  subscriberId: string;
  initialStepsPageBounds?: { startIndex: number; endIndexExclusive: number };
}

export function streamRequest(input: StreamInput): JsonBody {
  return compact({
    conversationId: input.conversationId,
    subscriberId: input.subscriberId,
    initialStepsPageBounds:
      input.initialStepsPageBounds === undefined
        ? undefined
        : {
            startIndex: input.initialStepsPageBounds.startIndex,
            endIndexExclusive: input.initialStepsPageBounds.endIndexExclusive,
          },
  });
}

export interface CancelStepsInput {
  conversationId: string;
  stepIndices?: number[];
}

export function cancelStepsRequest(input: CancelStepsInput): JsonBody {
  return compact({ cascadeId: input.conversationId, stepIndices: input.stepIndices && [...input.stepIndices] });
}

export interface CancelInvocationInput {
  conversationId: string;
  killBackgroundTasks?: boolean;
}

export function cancelInvocationRequest(input: CancelInvocationInput): JsonBody {
  return compact({ cascadeId: input.conversationId, killBackgroundTasks: input.killBackgroundTasks });
}

export interface ConversationInput {
  conversationId: string;
}

export function forceStopRequest(input: ConversationInput): JsonBody {
  return { conversationId: input.conversationId };
}

export function conversationMetadataRequest(input: ConversationInput): JsonBody {
  return { conversationId: input.conversationId };
}

export interface StartCascadeInput {
  /** A uuid you choose; omitted, agy mints one and returns it (as `cascadeId`). */
  conversationId?: string;
  /** Defaults to `CORTEX_TRAJECTORY_SOURCE_CLI`, the only required field (agy 1.0.10). */
  source?: string;
}

export function startCascadeRequest(input: StartCascadeInput = {}): JsonBody {
  return compact({ cascadeId: input.conversationId, source: input.source ?? CLI_TRAJECTORY_SOURCE });
}

export interface SendMessageInput {
  conversationId: string;
  text: string;
  /** Required: agy refuses a turn without a model ("neither PlanModel nor RequestedModel specified"). */
  planModel: string;
}

/** Library use only: user turns go through the TUI, not this call. */
export function sendMessageRequest(input: SendMessageInput): JsonBody {
  return {
    cascadeId: input.conversationId,
    items: [{ text: input.text }],
    cascadeConfig: { plannerConfig: { planModel: input.planModel } },
  };
}

export function trajectoryRequest(input: ConversationInput): JsonBody {
  return { cascadeId: input.conversationId };
}

function compact(fields: Record<string, unknown>): JsonBody {
  const out: JsonBody = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) out[key] = value;
  }
  return out;
}
