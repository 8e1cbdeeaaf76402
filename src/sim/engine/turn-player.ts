/**
 * Plays one user turn of a simulated conversation from its scenario script:
 * streamed planner text, tool steps, gates that park the turn until answered
 * or timed out (commands, questions, file reads, edits and creations),
 * sub-agents, ERROR planners and ERROR_MESSAGE steps.
 */
import { randomUUID } from "node:crypto";
import { TurnStopped, type QueuedTurn, type SimConversation, type TurnPlayer, type TurnToken } from "./conversation.js";
import { playCommand, playFileWrite, playGatedFileRead, playQuestion } from "./gated-steps.js";
import type { ErrorMessageScriptStep, ErrorScriptStep, PlannerScriptStep, Scenario, ScriptStep } from "./scenario-schema.js";
import { matchScenario } from "./scenarios.js";
import type { SimClock } from "./sim-clock.js";
import { playSubagent } from "./subagent-step.js";
import { genericBody, genericCall, listDirectoryBody, listDirectoryCall, viewFileBody, viewFileCall } from "./tool-bodies.js";
import type { SubagentSpawn, TurnScope, TurnSettings } from "./turn-scope.js";
import { STEP_STATUS, STEP_TYPE, STOP_REASON } from "../../protocol/wire-names.js";
import {
  checkpointStep,
  conversationHistoryStep,
  dispatchingPlannerStep,
  errorDetails,
  errorMessageStep,
  generatingPlannerStep,
  modelUsage,
  moveStep,
  newThinkingSignature,
  newToolCallId,
  reorderModelUsage,
  toolCallObject,
  toolStepMetadata,
  userInputStep,
  type JsonObject,
  type StepPlace,
  type ToolCallSpec,
  type WireStep,
} from "./step-factory.js";

export interface TurnPlayerOptions {
  scenarios: readonly Scenario[];
  clock: SimClock;
  /** Multiplies every scenario delay. */
  speed: number;
  interactionTimeoutMs: number;
  stamp: () => string;
  /** Creates a sub-agent's conversation under `parent` and starts its turn. */
  spawnSubagent: (parent: SimConversation, spawn: SubagentSpawn) => SimConversation;
}

const S = STEP_STATUS;

const FALLBACK_SCRIPT: ScriptStep[] = [{ kind: "planner", text: "You said: {{input}}" }];

export function createTurnPlayer(options: TurnPlayerOptions): TurnPlayer {
  return async (conversation, queued, token) => {
    const turn = new Turn(options, conversation, queued, token);
    try {
      await turn.run();
    } catch (error) {
      if (error instanceof TurnStopped) return;
      turn.fail(error);
      throw error;
    } finally {
      turn.settle();
    }
  };
}

class Turn implements TurnScope {
  readonly settings: TurnSettings;
  readonly conv: SimConversation;
  readonly token: TurnToken;
  readonly #options: TurnPlayerOptions;
  readonly #turn: QueuedTurn;
  readonly #executionId = randomUUID();
  readonly #firstIndex: number;

  constructor(options: TurnPlayerOptions, conversation: SimConversation, turn: QueuedTurn, token: TurnToken) {
    this.#options = options;
    this.settings = { clock: options.clock, interactionTimeoutMs: options.interactionTimeoutMs, stamp: options.stamp };
    this.conv = conversation;
    this.#turn = turn;
    this.token = token;
    this.#firstIndex = conversation.steps.length;
  }

  async run(): Promise<void> {
    const conv = this.conv;
    const firstTurn = conv.steps.length === 0;
    const userPlace = this.place(0);
    const userIndex = conv.steps.length;
    conv.lastUserInputTime = userPlace.stamp;
    conv.lastUserInputStepIndex = userIndex;
    conv.append(userInputStep(userPlace, this.#turn.text));
    if (firstTurn) conv.append(conversationHistoryStep(this.place(0)));
    const script = this.#turn.script ?? matchScenario(this.#options.scenarios, this.#turn.text)?.steps ?? FALLBACK_SCRIPT;
    for (const step of script) {
      const goOn = await this.#play(step);
      if (!goOn) return;
    }
  }

  /** After a stopped turn: steps it left unfinished are CANCELED (synthesized: agy's exact status is unverified). */
  settle(): void {
    const how = this.token.stopped;
    if (how === undefined) return;
    this.#closeOpenSteps(how === "force", (step) => moveStep(step, S.CANCELED, this.settings.stamp()));
  }

  /**
   * The simulator failed mid-turn: every step the turn left open (WAITING
   * included) becomes ERROR with the reason in `step.error`, so no client
   * waits on a step that will never move.
   */
  fail(error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    const detail = errorDetails({ message: "The simulator failed while playing this turn.", fullError: `simulator failure: ${reason}` });
    this.#closeOpenSteps(true, (step) => {
      step.error = structuredClone(detail);
      moveStep(step, S.ERROR, this.settings.stamp());
    });
  }

  #closeOpenSteps(includeWaiting: boolean, close: (step: WireStep) => void): void {
    const changed: number[] = [];
    for (let i = this.#firstIndex; i < this.conv.steps.length; i += 1) {
      const step = this.conv.steps[i];
      if (step === undefined) continue;
      const open = step.status === S.PENDING || step.status === S.RUNNING || step.status === S.GENERATING;
      if (open || (includeWaiting && step.status === S.WAITING)) {
        this.conv.releaseGate(i);
        close(step);
        changed.push(i);
      }
    }
    if (changed.length > 0) this.conv.touched(...changed);
  }

  async #play(step: ScriptStep): Promise<boolean> {
    switch (step.kind) {
      case "planner":
        await this.planner(step);
        return true;
      case "command":
        return playCommand(this, step);
      case "question":
        await playQuestion(this, step);
        return true;
      case "listDirectory":
        await this.#simpleTool(listDirectoryCall(step), STEP_TYPE.LIST_DIRECTORY, listDirectoryBody(step));
        return true;
      case "viewFile":
        if (step.askFilePermission === true) return playGatedFileRead(this, step);
        await this.#simpleTool(viewFileCall(step), STEP_TYPE.VIEW_FILE, viewFileBody(step));
        return true;
      case "editFile":
      case "createFile":
        return playFileWrite(this, step);
      case "generic":
        await this.#simpleTool(genericCall(step), STEP_TYPE.GENERIC, genericBody(step));
        return true;
      case "error":
        await this.#errorPlanner(step);
        return false;
      case "errorMessage":
        this.#errorMessage(step);
        return true;
      case "subagent":
        await playSubagent(this, step);
        return true;
      case "checkpoint": {
        const place = this.place(this.conv.metadataIndex);
        this.conv.append(checkpointStep(place, step.userIntent, [this.#turn.text]));
        return true;
      }
      case "delay":
        await this.sleep(step.ms);
        return true;
    }
  }

  place(metadataIndex: number): StepPlace {
    return {
      cascadeId: this.conv.id,
      trajectoryId: this.conv.trajectoryId,
      stepIndex: this.conv.steps.length,
      metadataIndex,
      executionId: this.#executionId,
      model: this.#turn.model,
      stamp: this.settings.stamp(),
    };
  }

  fill(template: string, answer = ""): string {
    // Replacer functions: a user's `$&` or `` $` `` is text, never a replacement pattern.
    return template.replaceAll("{{input}}", () => this.#turn.text).replaceAll("{{answer}}", () => answer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.token.stopped !== undefined) {
        reject(new TurnStopped());
        return;
      }
      const timer = this.settings.clock.setTimeout(() => {
        off();
        resolve();
      }, ms * this.#options.speed);
      const off = this.token.onStop(() => {
        this.settings.clock.clearTimeout(timer);
        reject(new TurnStopped());
      });
    });
  }

  spawnSubagent(spawn: SubagentSpawn): SimConversation {
    return this.#options.spawnSubagent(this.conv, spawn);
  }

  async planner(script: PlannerScriptStep | { text: string; thinking?: string; chunks?: number; chunkDelayMs?: number }): Promise<void> {
    const conv = this.conv;
    const text = this.fill(script.text);
    const index = conv.append(generatingPlannerStep(this.place(conv.metadataIndex++)));
    const chunks = script.chunks ?? 4;
    const delay = script.chunkDelayMs ?? 40;
    const step = (): WireStep => conv.steps[index] as WireStep;
    const grow = async (field: "thinking" | "modifiedResponse", full: string): Promise<void> => {
      for (const prefix of prefixes(full, chunks)) {
        await this.sleep(delay);
        (step().plannerResponse as JsonObject)[field] = prefix;
        step().metadata.lastCompletedChunkAt = this.settings.stamp();
        conv.touched(index);
      }
    };
    const thinking = script.thinking === undefined ? undefined : this.fill(script.thinking);
    if (thinking !== undefined) await grow("thinking", thinking);
    await grow("modifiedResponse", text);
    const done = step();
    const stamp = this.settings.stamp();
    const previous = done.plannerResponse as JsonObject;
    done.plannerResponse = {
      response: text,
      modifiedResponse: text,
      ...(previous.thinking !== undefined ? { thinking: previous.thinking } : {}),
      thinkingSignature: newThinkingSignature(),
      messageId: previous.messageId,
      stopReason: STOP_REASON.STOP_PATTERN,
    };
    delete done.metadata.lastCompletedChunkAt;
    Object.assign(done.metadata, { finishedGeneratingAt: stamp, startedAt: stamp, completedAt: stamp });
    const usage = modelUsage(this.#turn.model, { responseChars: text.length, ...(thinking !== undefined ? { thinkingChars: thinking.length } : {}) });
    done.metadata = reorderModelUsage(done.metadata, usage);
    moveStep(done, S.DONE, stamp);
    conv.touched(index);
  }

  /** An ERROR planner: the failure detail is on the step (`step.error`), as agy's schema puts it (spike-notes §11). */
  async #errorPlanner(script: ErrorScriptStep): Promise<void> {
    const conv = this.conv;
    const index = conv.append(generatingPlannerStep(this.place(conv.metadataIndex++)));
    await this.sleep(40);
    const step = conv.steps[index] as WireStep;
    step.metadata.completedAt = this.settings.stamp();
    moveStep(step, S.ERROR, this.settings.stamp());
    step.error = errorDetails(script);
    conv.touched(index);
  }

  #errorMessage(script: ErrorMessageScriptStep): void {
    this.conv.append(errorMessageStep(this.place(this.conv.metadataIndex), script, script.shouldShowUser !== false));
  }

  /** Appends the text-less planner that dispatches a tool; returns its metadata index. */
  async #dispatch(toolCall: JsonObject): Promise<number> {
    const metadataIndex = this.conv.metadataIndex++;
    await this.sleep(30);
    this.conv.append(dispatchingPlannerStep(this.place(metadataIndex), toolCall));
    await this.sleep(10);
    return metadataIndex;
  }

  async toolStep(spec: ToolCallSpec, type: string, body: JsonObject): Promise<number> {
    const toolCall = toolCallObject(newToolCallId(), spec);
    const metadataIndex = await this.#dispatch(toolCall);
    const place = this.place(metadataIndex);
    return this.conv.append({ type, status: S.PENDING, metadata: toolStepMetadata(place, toolCall, spec), ...body });
  }

  async #simpleTool(spec: ToolCallSpec, type: string, result: JsonObject): Promise<number> {
    const index = await this.toolStep(spec, type, {});
    await this.sleep(10);
    const step = this.conv.steps[index] as WireStep;
    Object.assign(step, result);
    step.metadata.completedAt = this.settings.stamp();
    moveStep(step, S.DONE, this.settings.stamp());
    this.conv.touched(index);
    return index;
  }
}

/** Growing prefixes of `text` in about `chunks` pieces (the last is the whole text). */
function prefixes(text: string, chunks: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / chunks));
  const out: string[] = [];
  for (let end = size; end < text.length; end += size) out.push(text.slice(0, end));
  out.push(text);
  return out;
}
