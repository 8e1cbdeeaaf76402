/**
 * What a step player needs from the turn that plays it. Gated steps
 * (gated-steps.ts) and sub-agents (subagent-step.ts) see the turn only through
 * this narrow scope, so they never import the turn player itself.
 */
import type { SimConversation, TurnToken } from "./conversation.js";
import type { ScriptStep } from "./scenario-schema.js";
import type { SimClock } from "./sim-clock.js";
import type { JsonObject, StepPlace, ToolCallSpec } from "./step-factory.js";

/** The turn-wide settings a step player reads. */
export interface TurnSettings {
  readonly clock: SimClock;
  /** How long a WAITING step waits before it times out to ERROR and is retried. */
  readonly interactionTimeoutMs: number;
  /** RFC 3339 stamp for "now". */
  stamp(): string;
}

/** A child conversation a sub-agent step starts (agy's INVOKE_SUBAGENT, spike-notes §4.3, §4.11). */
export interface SubagentSpawn {
  typeName: string;
  role: string;
  /** The child's first turn text. */
  prompt: string;
  /** The script the child plays for that turn. */
  steps: readonly ScriptStep[];
}

export interface TurnScope {
  readonly conv: SimConversation;
  readonly settings: TurnSettings;
  readonly token: TurnToken;
  place(metadataIndex: number): StepPlace;
  sleep(ms: number): Promise<void>;
  fill(template: string, answer?: string): string;
  planner(script: { text: string }): Promise<void>;
  /** Appends the dispatching planner and the PENDING tool step; returns the tool step's index. */
  toolStep(spec: ToolCallSpec, type: string, body: JsonObject): Promise<number>;
  /** Starts a child conversation playing `spawn` (its own conversation on the same server). */
  spawnSubagent(spawn: SubagentSpawn): SimConversation;
}
