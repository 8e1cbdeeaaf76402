/**
 * The JSON format of a simulator scenario: which user turn it answers and the
 * script of steps the simulated agy plays for it. Documented in
 * docs/simulator.md; validated with zod so a bad file names its path.
 */
import { z } from "zod";

const DelayMs = z.number().int().min(0);

/** Planner text, streamed in chunks while the step is GENERATING. `{{input}}` is the user's turn text. */
export const PlannerScriptStepSchema = z.strictObject({
  kind: z.literal("planner"),
  text: z.string().min(1),
  /** Streamed before the text, as thinking models do. */
  thinking: z.string().optional(),
  /** Number of chunks the text is split into (default 4). */
  chunks: z.number().int().min(1).optional(),
  /** Delay between chunks in ms, before `speed` (default 40). */
  chunkDelayMs: DelayMs.optional(),
});

/** A RUN_COMMAND step, behind a permission gate unless `gate` is false. */
export const CommandScriptStepSchema = z.strictObject({
  kind: z.literal("command"),
  commandLine: z.string().min(1),
  cwd: z.string().optional(),
  /** What the simulated command prints (`combinedOutput.full`). */
  output: z.string().optional(),
  exitCode: z.number().int().optional(),
  /** false = auto-allowed: the step runs without a WAITING prompt. Default true. */
  gate: z.boolean().optional(),
  /** How long the command "runs" after approval, in ms before `speed` (default 30). */
  runMs: DelayMs.optional(),
  /** The planner text that follows a deny; the turn then ends. */
  deniedText: z.string().optional(),
  /**
   * Park the gate without a stream frame: only snapshots and `waitingSteps`
   * show it WAITING, as agy did with the second gate of a chained command
   * (spike-notes §5.2). Default false.
   */
  silentGate: z.boolean().optional(),
  toolAction: z.string().optional(),
  toolSummary: z.string().optional(),
});

export const QuestionSpecSchema = z.strictObject({
  question: z.string().min(1),
  options: z.array(z.string().min(1)).min(1),
  multiSelect: z.boolean().optional(),
});

/** An ASK_QUESTION step; options get ids "1".."N". */
export const QuestionScriptStepSchema = z.strictObject({
  kind: z.literal("question"),
  questions: z.array(QuestionSpecSchema).min(1),
  /** Planner text after an answer; `{{answer}}` is the chosen option texts joined by ", ". */
  answeredText: z.string().optional(),
  /** Planner text after an empty answer (skip / decline). */
  skippedText: z.string().optional(),
  toolAction: z.string().optional(),
  toolSummary: z.string().optional(),
});

export const ListDirectoryScriptStepSchema = z.strictObject({
  kind: z.literal("listDirectory"),
  path: z.string().min(1),
  entries: z.array(z.strictObject({ name: z.string().min(1), isDir: z.boolean().optional(), sizeBytes: z.number().int().min(0).optional() })),
});

export const ViewFileScriptStepSchema = z.strictObject({
  kind: z.literal("viewFile"),
  path: z.string().min(1),
  numLines: z.number().int().min(0),
  numBytes: z.number().int().min(0),
  /**
   * Ask a file-permission gate first (`requestedInteraction.filePermission`,
   * a variant from agy's schema that clients cannot answer generically).
   */
  askFilePermission: z.boolean().optional(),
  /** The planner text after the file permission is denied; the turn then ends. */
  deniedText: z.string().optional(),
});

/**
 * An edit of an existing file (`replace_file_content`, a CODE_ACTION step)
 * behind a file-permission gate: agy 1.2.x draws `Pending edit` for it
 * (spike-notes §13 #32, K8). Approved, the step runs; denied, it is declined
 * and the turn ends with `deniedText`.
 */
export const EditFileScriptStepSchema = z.strictObject({
  kind: z.literal("editFile"),
  path: z.string().min(1),
  /** The lines the edit replaces (`TargetContent`). */
  removed: z.array(z.string()).min(1),
  /** The lines that replace them (`ReplacementContent`); empty = a deletion. */
  added: z.array(z.string()),
  deniedText: z.string().optional(),
});

/**
 * A new file (`write_to_file`, a WRITE_TO_FILE step) behind a
 * file-permission gate: agy 1.2.x draws `Create file`, with `Reason: outside
 * workspace` and a third option when the path lies outside the workspace
 * (spike-notes §13 #32, K8).
 */
export const CreateFileScriptStepSchema = z.strictObject({
  kind: z.literal("createFile"),
  path: z.string().min(1),
  /** The file's lines (`CodeContent`). */
  lines: z.array(z.string()).min(1),
  deniedText: z.string().optional(),
});

/** A GENERIC tool step (e.g. `manage_subagents`); the stream keeps its toolCall minus argumentsJson. */
export const GenericScriptStepSchema = z.strictObject({
  kind: z.literal("generic"),
  toolName: z.string().min(1),
  args: z.record(z.string(), z.unknown()),
  result: z.string(),
  title: z.string().optional(),
  titlePrefix: z.string().optional(),
  markdown: z.string().optional(),
  icon: z.string().optional(),
});

/** agy's `CortexErrorDetails` beyond the user's sentence (spike-notes §11). */
const errorDetailFields = {
  /** The sentence shown to the user (`userErrorMessage`). */
  message: z.string().min(1),
  /** Default: `message`. */
  shortError: z.string().min(1).optional(),
  modelErrorMessage: z.string().min(1).optional(),
  /** Default: `message`. */
  fullError: z.string().min(1).optional(),
};

/** An ERROR planner whose `step.error` carries the detail; the turn ends. */
export const ErrorScriptStepSchema = z.strictObject({
  kind: z.literal("error"),
  ...errorDetailFields,
});

/** An ERROR_MESSAGE step (`errorMessage { error, shouldShowUser }`); the turn goes on. */
export const ErrorMessageScriptStepSchema = z.strictObject({
  kind: z.literal("errorMessage"),
  ...errorDetailFields,
  /** Default true. */
  shouldShowUser: z.boolean().optional(),
});

export const CheckpointScriptStepSchema = z.strictObject({
  kind: z.literal("checkpoint"),
  userIntent: z.string().min(1),
});

export const DelayScriptStepSchema = z.strictObject({
  kind: z.literal("delay"),
  ms: DelayMs,
});

const PLAIN_STEP_SCHEMAS = [
  PlannerScriptStepSchema,
  CommandScriptStepSchema,
  QuestionScriptStepSchema,
  ListDirectoryScriptStepSchema,
  ViewFileScriptStepSchema,
  EditFileScriptStepSchema,
  CreateFileScriptStepSchema,
  GenericScriptStepSchema,
  ErrorScriptStepSchema,
  ErrorMessageScriptStepSchema,
  CheckpointScriptStepSchema,
  DelayScriptStepSchema,
] as const;

/** What a sub-agent's own conversation plays (no nested sub-agents). */
export const SubagentChildStepSchema = z.discriminatedUnion("kind", [...PLAIN_STEP_SCHEMAS]);

/**
 * An INVOKE_SUBAGENT step: a child conversation (its own entry in
 * `GetAllCascadeTrajectories`, with `parentConversationId`) plays `steps`
 * for the turn `prompt`; the step stays RUNNING until the child is idle.
 */
export const SubagentScriptStepSchema = z.strictObject({
  kind: z.literal("subagent"),
  typeName: z.string().min(1),
  role: z.string().min(1),
  prompt: z.string().min(1),
  steps: z.array(SubagentChildStepSchema).min(1),
});

export const ScriptStepSchema = z.discriminatedUnion("kind", [...PLAIN_STEP_SCHEMAS, SubagentScriptStepSchema]);

export const ScenarioMatchSchema = z.union([
  z.strictObject({ text: z.string().min(1) }),
  z.strictObject({ regex: z.string().min(1) }),
  z.strictObject({ default: z.literal(true) }),
]);

export const ScenarioSchema = z.strictObject({
  description: z.string().optional(),
  match: ScenarioMatchSchema,
  steps: z.array(ScriptStepSchema).min(1),
});

export type ScriptStep = z.infer<typeof ScriptStepSchema>;
export type PlannerScriptStep = z.infer<typeof PlannerScriptStepSchema>;
export type CommandScriptStep = z.infer<typeof CommandScriptStepSchema>;
export type QuestionScriptStep = z.infer<typeof QuestionScriptStepSchema>;
export type GenericScriptStep = z.infer<typeof GenericScriptStepSchema>;
export type ViewFileScriptStep = z.infer<typeof ViewFileScriptStepSchema>;
export type EditFileScriptStep = z.infer<typeof EditFileScriptStepSchema>;
export type CreateFileScriptStep = z.infer<typeof CreateFileScriptStepSchema>;
export type ListDirectoryScriptStep = z.infer<typeof ListDirectoryScriptStepSchema>;
export type ErrorScriptStep = z.infer<typeof ErrorScriptStepSchema>;
export type ErrorMessageScriptStep = z.infer<typeof ErrorMessageScriptStepSchema>;
export type SubagentScriptStep = z.infer<typeof SubagentScriptStepSchema>;
export type ScenarioMatch = z.infer<typeof ScenarioMatchSchema>;
export type ScenarioFile = z.infer<typeof ScenarioSchema>;

/** A loaded scenario: the file's content plus its name (the file name without `.json`). */
export interface Scenario extends ScenarioFile {
  name: string;
}
