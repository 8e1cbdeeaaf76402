/**
 * The simulated language server's unary methods, answering like agy does
 * (agy 1.0.10 / 1.1.x facts): 200 with proto-JSON on success, 500
 * `{"code":"unknown","message":…}` for not-found-like failures.
 */
import type { SimConversation } from "../engine/conversation.js";
import type { SimEngine } from "../engine/engine.js";
import { pollProjection } from "../engine/projection.js";
import type { JsonObject } from "../engine/step-factory.js";

/** A unary answer: a body with status 200, or a Connect error. */
export type UnaryResult = { status: 200; body: JsonObject } | { status: number; code: string; message: string };

export type UnaryHandler = (request: JsonObject) => UnaryResult;

export interface UnaryHandlerOptions {
  engine: SimEngine;
  /** The workspace GetConversationMetadata reports. */
  workspacePath: string;
}

const ok = (body: JsonObject = {}): UnaryResult => ({ status: 200, body });
const fail = (message: string): UnaryResult => ({ status: 500, code: "unknown", message });
const NOT_FOUND = fail("trajectory not found");

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function int(value: unknown): number {
  const n = typeof value === "string" ? Number.parseInt(value, 10) : typeof value === "number" ? value : 0;
  return Number.isFinite(n) ? n : 0;
}

export function createUnaryHandlers(options: UnaryHandlerOptions): Record<string, UnaryHandler> {
  const { engine } = options;
  const find = (id: unknown): SimConversation | undefined => (typeof id === "string" ? engine.conversation(id) : undefined);
  const workspaceUri = `file://${options.workspacePath}`;

  return {
    Heartbeat: () => ok(),

    GetConversationMetadata: (req) => {
      const conv = find(req.conversationId);
      if (conv === undefined) return NOT_FOUND;
      return ok({
        metadata: {
          rootConversationId: conv.id,
          workspaces: [
            {
              workspaceFolderAbsoluteUri: workspaceUri,
              gitRootAbsoluteUri: workspaceUri,
              repository: { computedName: options.workspacePath.split("/").filter(Boolean).pop() ?? "project" },
              branchName: "main",
            },
          ],
          workspaceUris: [workspaceUri],
        },
      });
    },

    GetCascadeTrajectorySteps: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      const steps = conv.steps.slice(Math.max(0, int(req.stepOffset))).map(pollProjection);
      return ok(steps.length > 0 ? { steps } : {});
    },

    GetCascadeTrajectory: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      const trajectory: JsonObject = { trajectoryId: conv.trajectoryId, cascadeId: conv.id };
      if (conv.steps.length > 0) trajectory.steps = conv.steps.map(pollProjection);
      return ok({
        trajectory,
        status: conv.runStatus,
        ...(conv.steps.length > 0 ? { numTotalSteps: conv.steps.length } : {}),
      });
    },

    HandleCascadeUserInteraction: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      const interaction = (typeof req.interaction === "object" && req.interaction !== null ? req.interaction : {}) as JsonObject;
      const stepIndex = int(interaction.stepIndex);
      // agy keys delivery on ids inside `interaction` only; top-level extras are dropped (1.0.10, live).
      const accepted = interaction.trajectoryId === conv.trajectoryId && conv.deliver(stepIndex, structuredClone(interaction));
      return accepted ? ok() : fail(`input not registered for step ${stepIndex}`);
    },

    CancelCascadeSteps: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      conv.interrupt();
      return ok();
    },

    CancelCascadeInvocation: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      conv.forceStop({ dropQueued: false });
      return ok();
    },

    ForceStopCascadeTree: (req) => {
      const conv = find(req.conversationId ?? req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      conv.forceStop({ dropQueued: true });
      return ok();
    },

    GetAllCascadeTrajectories: () => {
      const trajectorySummaries: JsonObject = {};
      for (const conv of engine.conversations()) trajectorySummaries[conv.id] = summaryOf(conv);
      return ok({ trajectorySummaries });
    },

    GetAvailableModels: () =>
      ok({
        response: {
          models: {
            "gemini-medium": { model: "MODEL_PLACEHOLDER_M20", displayName: "Gemini (Medium)", recommended: true, supportsThinking: true, thinkingBudget: 8192 },
            "gemini-high": { model: "MODEL_PLACEHOLDER_M71", displayName: "Gemini (High)", supportsThinking: true, thinkingBudget: 32768 },
          },
          defaultAgentModelId: engine.model,
        },
      }),

    StartCascade: (req) => {
      const conv = engine.startHeadless(str(req.cascadeId));
      return ok({ cascadeId: conv.id });
    },

    SendUserCascadeMessage: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      const planner = ((req.cascadeConfig as JsonObject | undefined)?.plannerConfig ?? {}) as JsonObject;
      const model = str(planner.planModel) ?? str((planner.requestedModel as JsonObject | undefined)?.model);
      if (model === undefined) return fail("neither PlanModel nor RequestedModel specified");
      const items = Array.isArray(req.items) ? (req.items as JsonObject[]) : [];
      conv.submit(items.map((item) => (typeof item.text === "string" ? item.text : "")).join(""));
      return ok();
    },
  };
}

/** One `trajectorySummaries` entry; times are absent until the first turn (agy 1.0.10). */
function summaryOf(conv: SimConversation): JsonObject {
  const summary: JsonObject = { trajectoryId: conv.trajectoryId, status: conv.runStatus, createdTime: conv.createdTime };
  if (conv.steps.length > 0) summary.stepCount = conv.steps.length;
  if (conv.lastModifiedTime !== undefined) summary.lastModifiedTime = conv.lastModifiedTime;
  if (conv.lastUserInputTime !== undefined) summary.lastUserInputTime = conv.lastUserInputTime;
  if (conv.lastUserInputStepIndex !== undefined && conv.lastUserInputStepIndex > 0) summary.lastUserInputStepIndex = conv.lastUserInputStepIndex;
  const first = conv.steps[0]?.userInput as JsonObject | undefined;
  if (typeof first?.userResponse === "string") summary.summary = first.userResponse.slice(0, 80);
  summary.trajectoryType = "CORTEX_TRAJECTORY_TYPE_CASCADE";
  summary.trajectoryMetadata = { createdAt: conv.createdTime, rootConversationId: conv.id };
  const waiting = conv.waitingIndices().map((index) => {
    const entry: JsonObject = { step: pollProjection(conv.steps[index]!) };
    if (index !== 0) entry.stepIndex = index;
    return entry;
  });
  if (waiting.length > 0) summary.waitingSteps = waiting;
  return summary;
}
