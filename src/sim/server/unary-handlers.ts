/**
 * The simulated language server's unary methods, answering like agy does
 * (agy 1.0.10 / 1.1.x facts): 200 with proto-JSON on success, 500
 * `{"code":"unknown","message":…}` for not-found-like failures. Methods and
 * fields recorded only for newer builds exist only in those personas.
 */
import type { SimConversation } from "../engine/conversation.js";
import type { SimEngine } from "../engine/engine.js";
import type { AgyPersona } from "../engine/persona.js";
import { pollProjection } from "../engine/projection.js";
import { asIndex, asObject, asString, type JsonObject } from "../../protocol/json.js";
import { TRAJECTORY_TYPE } from "../../protocol/wire-names.js";

/** A unary answer: a body with status 200, or a Connect error. */
export type UnaryResult = { status: 200; body: JsonObject } | { status: number; code: string; message: string };

export type UnaryHandler = (request: JsonObject) => UnaryResult;

export interface UnaryHandlerOptions {
  engine: SimEngine;
  persona: AgyPersona;
  /** The workspace GetConversationMetadata reports. */
  workspacePath: string;
}

const ok = (body: JsonObject = {}): UnaryResult => ({ status: 200, body });
const fail = (message: string): UnaryResult => ({ status: 500, code: "unknown", message });
const NOT_FOUND = fail("trajectory not found");

/** A non-empty string (proto-JSON omits empty ones, so "" means absent). */
function str(value: unknown): string | undefined {
  return asString(value) || undefined;
}

export function createUnaryHandlers(options: UnaryHandlerOptions): Record<string, UnaryHandler> {
  const { engine, persona } = options;
  const find = (id: unknown): SimConversation | undefined => {
    const key = asString(id);
    return key === undefined ? undefined : engine.conversation(key);
  };
  const workspaceUri = `file://${options.workspacePath}`;
  const workspaces = (): JsonObject =>
    persona.metadataWorkspaces
      ? {
          workspaces: [
            {
              workspaceFolderAbsoluteUri: workspaceUri,
              gitRootAbsoluteUri: workspaceUri,
              repository: { computedName: options.workspacePath.split("/").filter(Boolean).pop() ?? "project" },
              branchName: "main",
            },
          ],
          workspaceUris: [workspaceUri],
        }
      : {};

  const handlers: Record<string, UnaryHandler> = {
    Heartbeat: () => ok(),

    GetConversationMetadata: (req) => {
      const conv = find(req.conversationId);
      if (conv === undefined) return NOT_FOUND;
      // 1.0.10 is recorded answering only the root id; newer builds add the workspaces (spike-notes §3.2, §10.4).
      return ok({ metadata: { rootConversationId: conv.lineage?.rootConversationId ?? conv.id, ...workspaces() } });
    },

    GetCascadeTrajectorySteps: (req) => {
      const conv = find(req.cascadeId);
      if (conv === undefined) return NOT_FOUND;
      const steps = conv.steps.slice(asIndex(req.stepOffset) ?? 0).map(pollProjection);
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
      const interaction = asObject(req.interaction) ?? {};
      // proto-JSON omits a zero stepIndex; anything present must be a non-negative integer.
      const stepIndex = interaction.stepIndex === undefined ? 0 : asIndex(interaction.stepIndex);
      if (stepIndex === undefined)
        return { status: 400, code: "invalid_argument", message: "unmarshal request: interaction.stepIndex is not a non-negative integer" };
      // agy keys delivery on ids inside `interaction` only; top-level extras are dropped (1.0.10, live).
      // It checks no kind either (spike-notes §3.5): `permission`, `askQuestion` and `filePermission` answers all land.
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
            "gemini-medium": {
              model: "MODEL_PLACEHOLDER_M20",
              displayName: "Gemini (Medium)",
              recommended: true,
              supportsThinking: true,
              thinkingBudget: 8192,
            },
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
      const planner = asObject(asObject(req.cascadeConfig)?.plannerConfig) ?? {};
      const model = str(planner.planModel) ?? str(asObject(planner.requestedModel)?.model);
      if (model === undefined) return fail("neither PlanModel nor RequestedModel specified");
      const items = Array.isArray(req.items) ? req.items : [];
      // The turn runs on the model it names (spike-notes §3.8): USER_INPUT and planner usage report it.
      conv.submit(items.map((item) => asString(asObject(item)?.text) ?? "").join(""), { model });
      return ok();
    },
  };
  // Recorded only from newer builds' clients (spike-notes §10.4): older personas answer 404, like any unknown method.
  if (!persona.cascadeTrajectoryMethod) delete handlers.GetCascadeTrajectory;
  return handlers;
}

/** One `trajectorySummaries` entry; times are absent until the first turn (agy 1.0.10). */
function summaryOf(conv: SimConversation): JsonObject {
  const summary: JsonObject = { trajectoryId: conv.trajectoryId, status: conv.runStatus, createdTime: conv.createdTime };
  if (conv.steps.length > 0) summary.stepCount = conv.steps.length;
  if (conv.lastModifiedTime !== undefined) summary.lastModifiedTime = conv.lastModifiedTime;
  if (conv.lastUserInputTime !== undefined) summary.lastUserInputTime = conv.lastUserInputTime;
  if (conv.lastUserInputStepIndex !== undefined && conv.lastUserInputStepIndex > 0) summary.lastUserInputStepIndex = conv.lastUserInputStepIndex;
  const firstText = asString(asObject(conv.steps[0]?.userInput)?.userResponse);
  if (firstText !== undefined) summary.summary = firstText.slice(0, 80);
  // Sub-agent children report the same type; only trajectoryMetadata tells them apart (spike-notes §3.11).
  summary.trajectoryType = TRAJECTORY_TYPE.CASCADE;
  const lineage = conv.lineage;
  summary.trajectoryMetadata =
    lineage === undefined
      ? { createdAt: conv.createdTime, rootConversationId: conv.id }
      : {
          createdAt: conv.createdTime,
          rootConversationId: lineage.rootConversationId,
          parentConversationId: lineage.parentConversationId,
          nestingDepth: lineage.nestingDepth,
          subagentSpec: { typeName: lineage.typeName, role: lineage.role },
        };
  const waiting = conv.waitingIndices().map((index) => {
    const entry: JsonObject = { step: pollProjection(conv.steps[index]!) };
    if (index !== 0) entry.stepIndex = index;
    return entry;
  });
  if (waiting.length > 0) summary.waitingSteps = waiting;
  return summary;
}
