/**
 * Plays one user turn of a simulated conversation from its scenario script:
 * streamed planner text, tool steps, permission gates and questions that park
 * the turn until answered or timed out, ERROR planners.
 */
import { randomUUID } from "node:crypto";
import { TurnStopped, type SimConversation, type TurnPlayer, type TurnToken } from "./conversation.js";
import { playCommand, playQuestion, type TurnScope } from "./gated-steps.js";
import type {
  GenericScriptStep,
  PlannerScriptStep,
  Scenario,
  ScriptStep,
} from "./scenario-schema.js";
import { matchScenario } from "./scenarios.js";
import type { SimClock } from "./sim-clock.js";
import { STEP_STATUS } from "../../protocol/wire-names.js";
import {
  STEP_TYPE,
  checkpointStep,
  conversationHistoryStep,
  dispatchingPlannerStep,
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
  /** The model enum written into steps. */
  model: string;
  stamp: () => string;
}

const S = STEP_STATUS;

const FALLBACK_SCRIPT: ScriptStep[] = [{ kind: "planner", text: "You said: {{input}}" }];

export function createTurnPlayer(options: TurnPlayerOptions): TurnPlayer {
  return async (conversation, text, token) => {
    const turn = new Turn(options, conversation, text, token);
    try {
      await turn.run();
    } catch (error) {
      if (!(error instanceof TurnStopped)) throw error;
    } finally {
      turn.settle();
    }
  };
}

class Turn implements TurnScope {
  readonly options: TurnPlayerOptions;
  readonly conv: SimConversation;
  readonly #text: string;
  readonly token: TurnToken;
  readonly #executionId = randomUUID();
  readonly #firstIndex: number;

  constructor(options: TurnPlayerOptions, conversation: SimConversation, text: string, token: TurnToken) {
    this.options = options;
    this.conv = conversation;
    this.#text = text;
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
    conv.append(userInputStep(userPlace, this.#text));
    if (firstTurn) conv.append(conversationHistoryStep(this.place(0)));
    const script = matchScenario(this.options.scenarios, this.#text)?.steps ?? FALLBACK_SCRIPT;
    for (const step of script) {
      const goOn = await this.#play(step);
      if (!goOn) return;
    }
  }

  /** After the turn: steps it left unfinished are CANCELED (synthesized: agy's exact status is unverified). */
  settle(): void {
    const how = this.token.stopped;
    if (how === undefined) return;
    const changed: number[] = [];
    for (let i = this.#firstIndex; i < this.conv.steps.length; i += 1) {
      const step = this.conv.steps[i];
      if (step === undefined) continue;
      const open = step.status === S.PENDING || step.status === S.RUNNING || step.status === S.GENERATING;
      if (open || (how === "force" && step.status === S.WAITING)) {
        this.conv.releaseGate(i);
        moveStep(step, S.CANCELED, this.options.stamp());
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
        await this.#simpleTool(
          { name: "list_dir", args: { DirectoryPath: step.path }, toolAction: `Listing ${step.path}`, toolSummary: "List directory" },
          STEP_TYPE.LIST_DIRECTORY,
          {
            listDirectory: {
              directoryPathUri: fileUri(step.path),
              results: step.entries.map((e) => ({
                name: e.name,
                ...(e.isDir === true ? { isDir: true } : {}),
                ...(e.sizeBytes !== undefined && e.sizeBytes > 0 ? { sizeBytes: String(e.sizeBytes) } : {}),
              })),
            },
          },
        );
        return true;
      case "viewFile":
        await this.#simpleTool(
          { name: "view_file", args: { AbsolutePath: step.path }, toolAction: `Reading ${step.path}`, toolSummary: "View file" },
          STEP_TYPE.VIEW_FILE,
          {
            viewFile: {
              absolutePathUri: fileUri(step.path),
              ...(step.numLines > 1 ? { endLine: step.numLines - 1 } : {}),
              ...(step.numBytes > 0 ? { lineRangeBytes: step.numBytes } : {}),
              ...(step.numLines > 0 ? { numLines: step.numLines } : {}),
              ...(step.numBytes > 0 ? { numBytes: step.numBytes } : {}),
            },
          },
        );
        return true;
      case "generic":
        await this.#generic(step);
        return true;
      case "error":
        await this.#errorPlanner(step.message);
        return false;
      case "checkpoint": {
        const place = this.place(this.conv.metadataIndex);
        this.conv.append(checkpointStep(place, step.userIntent, [this.#text]));
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
      model: this.options.model,
      stamp: this.options.stamp(),
    };
  }

  fill(template: string, answer = ""): string {
    return template.replaceAll("{{input}}", this.#text).replaceAll("{{answer}}", answer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.token.stopped !== undefined) {
        reject(new TurnStopped());
        return;
      }
      const timer = this.options.clock.setTimeout(() => {
        off();
        resolve();
      }, ms * this.options.speed);
      const off = this.token.onStop(() => {
        this.options.clock.clearTimeout(timer);
        reject(new TurnStopped());
      });
    });
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
        step().metadata.lastCompletedChunkAt = this.options.stamp();
        conv.touched(index);
      }
    };
    if (script.thinking !== undefined) await grow("thinking", this.fill(script.thinking));
    await grow("modifiedResponse", text);
    const done = step();
    const stamp = this.options.stamp();
    const previous = done.plannerResponse as JsonObject;
    done.plannerResponse = {
      response: text,
      modifiedResponse: text,
      ...(previous.thinking !== undefined ? { thinking: previous.thinking } : {}),
      thinkingSignature: newThinkingSignature(),
      messageId: previous.messageId,
      stopReason: "STOP_REASON_STOP_PATTERN",
    };
    delete done.metadata.lastCompletedChunkAt;
    Object.assign(done.metadata, { finishedGeneratingAt: stamp, startedAt: stamp, completedAt: stamp });
    done.metadata = reorderModelUsage(done.metadata, modelUsage(this.options.model, text.length));
    moveStep(done, S.DONE, stamp);
    conv.touched(index);
  }

  async #errorPlanner(message: string): Promise<void> {
    const conv = this.conv;
    const index = conv.append(generatingPlannerStep(this.place(conv.metadataIndex++)));
    await this.sleep(40);
    const step = conv.steps[index] as WireStep;
    // Synthesized: no capture shows an ERROR planner; the reference reads `errorMessage`.
    (step.plannerResponse as JsonObject).errorMessage = message;
    step.metadata.completedAt = this.options.stamp();
    moveStep(step, S.ERROR, this.options.stamp());
    conv.touched(index);
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
    step.metadata.completedAt = this.options.stamp();
    moveStep(step, S.DONE, this.options.stamp());
    this.conv.touched(index);
    return index;
  }

  async #generic(script: GenericScriptStep): Promise<void> {
    const render: JsonObject = {};
    if (script.title !== undefined) render.title = script.title;
    if (script.titlePrefix !== undefined) render.titlePrefix = script.titlePrefix;
    if (script.markdown !== undefined) render.markdown = script.markdown;
    if (script.icon !== undefined) render.icon = script.icon;
    await this.#simpleTool(
      { name: script.toolName, args: script.args as JsonObject, toolAction: `Running ${script.toolName}`, toolSummary: script.toolName },
      STEP_TYPE.GENERIC,
      {
        generic: {
          args: script.args,
          result: { result: script.result, ...(Object.keys(render).length > 0 ? { stepRenderInfo: { ...render, aggregationKey: script.toolName } } : {}) },
        },
      },
    );
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

function fileUri(path: string): string {
  return path.startsWith("file://") ? path : `file://${path.startsWith("/") ? "" : "/"}${path}`;
}
