/**
 * Plays one user turn of a simulated conversation from its scenario script:
 * streamed planner text, tool steps, permission gates and questions that park
 * the turn until answered or timed out, ERROR planners.
 */
import { randomUUID } from "node:crypto";
import type { SimConversation, SimInteraction, TurnPlayer, TurnToken } from "./conversation.js";
import type {
  CommandScriptStep,
  GenericScriptStep,
  PlannerScriptStep,
  QuestionScriptStep,
  Scenario,
  ScriptStep,
} from "./scenario-schema.js";
import { matchScenario } from "./scenarios.js";
import type { SimClock } from "./sim-clock.js";
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
  stepInfo,
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

class TurnStopped extends Error {}

const S = {
  PENDING: "CORTEX_STEP_STATUS_PENDING",
  RUNNING: "CORTEX_STEP_STATUS_RUNNING",
  WAITING: "CORTEX_STEP_STATUS_WAITING",
  GENERATING: "CORTEX_STEP_STATUS_GENERATING",
  DONE: "CORTEX_STEP_STATUS_DONE",
  ERROR: "CORTEX_STEP_STATUS_ERROR",
  CANCELED: "CORTEX_STEP_STATUS_CANCELED",
} as const;

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

class Turn {
  readonly #o: TurnPlayerOptions;
  readonly #conv: SimConversation;
  readonly #text: string;
  readonly #token: TurnToken;
  readonly #executionId = randomUUID();
  readonly #firstIndex: number;

  constructor(options: TurnPlayerOptions, conversation: SimConversation, text: string, token: TurnToken) {
    this.#o = options;
    this.#conv = conversation;
    this.#text = text;
    this.#token = token;
    this.#firstIndex = conversation.steps.length;
  }

  async run(): Promise<void> {
    const conv = this.#conv;
    const firstTurn = conv.steps.length === 0;
    const userPlace = this.#place(0);
    const userIndex = conv.steps.length;
    conv.lastUserInputTime = userPlace.stamp;
    conv.lastUserInputStepIndex = userIndex;
    conv.append(userInputStep(userPlace, this.#text));
    if (firstTurn) conv.append(conversationHistoryStep(this.#place(0)));
    const script = matchScenario(this.#o.scenarios, this.#text)?.steps ?? FALLBACK_SCRIPT;
    for (const step of script) {
      const goOn = await this.#play(step);
      if (!goOn) return;
    }
  }

  /** After the turn: steps it left unfinished are CANCELED (synthesized: agy's exact status is unverified). */
  settle(): void {
    const how = this.#token.stopped;
    if (how === undefined) return;
    const changed: number[] = [];
    for (let i = this.#firstIndex; i < this.#conv.steps.length; i += 1) {
      const step = this.#conv.steps[i];
      if (step === undefined) continue;
      const open = step.status === S.PENDING || step.status === S.RUNNING || step.status === S.GENERATING;
      if (open || (how === "force" && step.status === S.WAITING)) {
        this.#conv.releaseGate(i);
        moveStep(step, S.CANCELED, this.#o.stamp());
        changed.push(i);
      }
    }
    if (changed.length > 0) this.#conv.touched(...changed);
  }

  async #play(step: ScriptStep): Promise<boolean> {
    switch (step.kind) {
      case "planner":
        await this.#planner(step);
        return true;
      case "command":
        return this.#command(step);
      case "question":
        await this.#question(step);
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
        const place = this.#place(this.#conv.metadataIndex);
        this.#conv.append(checkpointStep(place, step.userIntent, [this.#text]));
        return true;
      }
      case "delay":
        await this.#sleep(step.ms);
        return true;
    }
  }

  #place(metadataIndex: number): StepPlace {
    return {
      cascadeId: this.#conv.id,
      trajectoryId: this.#conv.trajectoryId,
      stepIndex: this.#conv.steps.length,
      metadataIndex,
      executionId: this.#executionId,
      model: this.#o.model,
      stamp: this.#o.stamp(),
    };
  }

  #fill(template: string, answer = ""): string {
    return template.replaceAll("{{input}}", this.#text).replaceAll("{{answer}}", answer);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#token.stopped !== undefined) {
        reject(new TurnStopped());
        return;
      }
      const timer = this.#o.clock.setTimeout(() => {
        off();
        resolve();
      }, ms * this.#o.speed);
      const off = this.#token.onStop(() => {
        this.#o.clock.clearTimeout(timer);
        reject(new TurnStopped());
      });
    });
  }

  async #planner(script: PlannerScriptStep | { text: string; thinking?: string; chunks?: number; chunkDelayMs?: number }): Promise<void> {
    const conv = this.#conv;
    const text = this.#fill(script.text);
    const index = conv.append(generatingPlannerStep(this.#place(conv.metadataIndex++)));
    const chunks = script.chunks ?? 4;
    const delay = script.chunkDelayMs ?? 40;
    const step = (): WireStep => conv.steps[index] as WireStep;
    const grow = async (field: "thinking" | "modifiedResponse", full: string): Promise<void> => {
      for (const prefix of prefixes(full, chunks)) {
        await this.#sleep(delay);
        (step().plannerResponse as JsonObject)[field] = prefix;
        step().metadata.lastCompletedChunkAt = this.#o.stamp();
        conv.touched(index);
      }
    };
    if (script.thinking !== undefined) await grow("thinking", this.#fill(script.thinking));
    await grow("modifiedResponse", text);
    const done = step();
    const stamp = this.#o.stamp();
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
    done.metadata = reorderModelUsage(done.metadata, modelUsage(this.#o.model, text.length));
    moveStep(done, S.DONE, stamp);
    conv.touched(index);
  }

  async #errorPlanner(message: string): Promise<void> {
    const conv = this.#conv;
    const index = conv.append(generatingPlannerStep(this.#place(conv.metadataIndex++)));
    await this.#sleep(40);
    const step = conv.steps[index] as WireStep;
    // Synthesized: no capture shows an ERROR planner; the reference reads `errorMessage`.
    (step.plannerResponse as JsonObject).errorMessage = message;
    step.metadata.completedAt = this.#o.stamp();
    moveStep(step, S.ERROR, this.#o.stamp());
    conv.touched(index);
  }

  /** Appends the text-less planner that dispatches a tool; returns its metadata index. */
  async #dispatch(toolCall: JsonObject): Promise<number> {
    const metadataIndex = this.#conv.metadataIndex++;
    await this.#sleep(30);
    this.#conv.append(dispatchingPlannerStep(this.#place(metadataIndex), toolCall));
    await this.#sleep(10);
    return metadataIndex;
  }

  async #toolStep(spec: ToolCallSpec, type: string, body: JsonObject): Promise<number> {
    const toolCall = toolCallObject(newToolCallId(), spec);
    const metadataIndex = await this.#dispatch(toolCall);
    const place = this.#place(metadataIndex);
    return this.#conv.append({ type, status: S.PENDING, metadata: toolStepMetadata(place, toolCall, spec), ...body });
  }

  async #simpleTool(spec: ToolCallSpec, type: string, result: JsonObject): Promise<number> {
    const index = await this.#toolStep(spec, type, {});
    await this.#sleep(10);
    const step = this.#conv.steps[index] as WireStep;
    Object.assign(step, result);
    step.metadata.completedAt = this.#o.stamp();
    moveStep(step, S.DONE, this.#o.stamp());
    this.#conv.touched(index);
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

  /**
   * Parks the turn on a WAITING step until answered. An unanswered prompt
   * times out to ERROR and agy retries it as a new WAITING step at a higher
   * index (agy 1.0.10, facts §5.3); the answer lands on whichever is current.
   */
  async #gate(firstIndex: number, request: JsonObject): Promise<{ index: number; interaction: SimInteraction }> {
    const conv = this.#conv;
    let index = firstIndex;
    for (;;) {
      const step = conv.steps[index] as WireStep;
      step.requestedInteraction = structuredClone(request);
      moveStep(step, S.WAITING, this.#o.stamp());
      conv.touched(index);
      const result = await new Promise<SimInteraction | "timeout">((resolve, reject) => {
        const timer = this.#o.clock.setTimeout(() => {
          conv.releaseGate(index);
          off();
          resolve("timeout");
        }, this.#o.interactionTimeoutMs);
        const off = this.#token.onStop((how) => {
          if (how !== "force") return;
          this.#o.clock.clearTimeout(timer);
          conv.releaseGate(index);
          reject(new TurnStopped());
        });
        conv.registerGate(index, (interaction) => {
          this.#o.clock.clearTimeout(timer);
          off();
          resolve(interaction);
        });
      });
      if (result !== "timeout") return { index, interaction: result };
      moveStep(step, S.ERROR, this.#o.stamp());
      conv.touched(index);
      const retry = structuredClone(step);
      const place = this.#place(Number((step.metadata.sourceTrajectoryStepInfo as JsonObject).metadataIndex ?? 0));
      delete retry.requestedInteraction;
      Object.assign(retry.metadata, {
        createdAt: place.stamp,
        viewableAt: place.stamp,
        startedAt: place.stamp,
        sourceTrajectoryStepInfo: stepInfo(place),
        internalMetadata: { statusTransitions: [{ updatedStatus: S.PENDING, timestamp: place.stamp }] },
      });
      retry.status = S.PENDING;
      index = conv.append(retry);
    }
  }

  #echo(index: number, request: JsonObject, interaction: SimInteraction, kind: "permission" | "askQuestion"): JsonObject[] {
    const response: JsonObject = { trajectoryId: this.#conv.trajectoryId };
    if (index !== 0) response.stepIndex = index;
    response[kind] = interaction[kind] ?? (kind === "permission" ? {} : {});
    return [{ request: structuredClone(request), response }];
  }

  async #command(script: CommandScriptStep): Promise<boolean> {
    const conv = this.#conv;
    const cwd = script.cwd ?? "/home/sim/project";
    const spec: ToolCallSpec = {
      name: "run_command",
      args: { CommandLine: script.commandLine, Cwd: cwd, WaitMsBeforeAsync: 2000 },
      toolAction: script.toolAction ?? `Running ${script.commandLine}`,
      toolSummary: script.toolSummary ?? `Run ${script.commandLine}`,
    };
    let index = await this.#toolStep(spec, STEP_TYPE.RUN_COMMAND, {
      runCommand: { commandLine: script.commandLine, proposedCommandLine: script.commandLine, cwd, waitMsBeforeAsync: "2000", blocking: true },
    });
    const resource = { action: "command", target: script.commandLine };
    let permissions: JsonObject | undefined;
    let completed: JsonObject[] | undefined;
    if (script.gate !== false) {
      const request = {
        permission: {
          resource,
          persistSuggestionType: "PERSIST_SUGGESTION_TYPE_SUGGESTED",
          suggestedPersistPattern: script.commandLine,
          actionDescription: spec.toolAction,
        },
      };
      const answered = await this.#gate(index, request);
      index = answered.index;
      const allow = (answered.interaction.permission as JsonObject | undefined)?.allow === true;
      // proto-JSON omits `allow: false`.
      permissions = { permissionGrants: [allow ? { resource, allow: true } : { resource }] };
      completed = this.#echo(index, request, answered.interaction, "permission");
      if (!allow) {
        this.#finish(index, { permissions, completedInteractions: completed });
        await this.#planner({ text: script.deniedText ?? "The command was declined, so I did not run it." });
        return false;
      }
    }
    const step = conv.steps[index] as WireStep;
    moveStep(step, S.RUNNING, this.#o.stamp());
    conv.touched(index);
    await this.#sleep(script.runMs ?? 30);
    const run = step.runCommand as JsonObject;
    run.exitCode = script.exitCode ?? 0;
    if (script.output !== undefined && script.output !== "") run.combinedOutput = { full: script.output };
    run.shellName = "bash";
    this.#finish(index, { ...(permissions !== undefined ? { permissions } : {}), ...(completed !== undefined ? { completedInteractions: completed } : {}) });
    return true;
  }

  /** Marks a step DONE, placing `extra` the way agy orders keys (permissions before the body, echoes last). */
  #finish(index: number, extra: JsonObject): void {
    const step = this.#conv.steps[index] as WireStep;
    step.metadata.completedAt = this.#o.stamp();
    moveStep(step, S.DONE, this.#o.stamp());
    const { type, status, metadata, requestedInteraction, ...body } = step;
    const { completedInteractions, ...front } = extra;
    const rebuilt: WireStep = { type, status, metadata, ...front, ...body };
    if (requestedInteraction !== undefined) rebuilt.requestedInteraction = requestedInteraction;
    if (completedInteractions !== undefined) rebuilt.completedInteractions = completedInteractions;
    this.#conv.steps[index] = rebuilt;
    this.#conv.touched(index);
  }

  async #question(script: QuestionScriptStep): Promise<void> {
    const conv = this.#conv;
    const spec: ToolCallSpec = {
      name: "ask_question",
      args: {
        questions: script.questions.map((q) => ({ is_multi_select: q.multiSelect === true, options: q.options, question: q.question })),
      },
      toolAction: script.toolAction ?? "Asking the user a question",
      toolSummary: script.toolSummary ?? "Question for the user",
    };
    const questions = script.questions.map((q) => ({
      question: q.question,
      options: q.options.map((text, i) => ({ id: String(i + 1), text })),
    }));
    let index = await this.#toolStep(spec, STEP_TYPE.ASK_QUESTION, { askQuestion: { questions: structuredClone(questions) } });
    moveStep(conv.steps[index] as WireStep, S.RUNNING, this.#o.stamp());
    const request = { askQuestion: { questions } };
    const answered = await this.#gate(index, request);
    index = answered.index;
    const payload = (answered.interaction.askQuestion as JsonObject | undefined) ?? {};
    const responses = Array.isArray(payload.responses) ? (payload.responses as JsonObject[]) : [];
    const chosen: string[] = [];
    const step = conv.steps[index] as WireStep;
    const stored = (step.askQuestion as { questions: JsonObject[] }).questions;
    questions.forEach((q, i) => {
      const response = responses.find((r) => r.question === q.question) ?? responses[i];
      const ids = Array.isArray(response?.selectedOptionIds) ? (response.selectedOptionIds as unknown[]).map(String) : [];
      if (ids.length > 0 && stored[i] !== undefined) stored[i].selectedOptionIds = ids;
      for (const id of ids) {
        const option = q.options.find((o) => o.id === id);
        if (option !== undefined) chosen.push(option.text);
      }
      if (typeof response?.writeInResponse === "string" && response.writeInResponse !== "") chosen.push(response.writeInResponse);
    });
    moveStep(step, S.RUNNING, this.#o.stamp());
    this.#finish(index, { completedInteractions: this.#echo(index, request, answered.interaction, "askQuestion") });
    const text =
      chosen.length > 0
        ? this.#fill(script.answeredText ?? "You chose: {{answer}}.", chosen.join(", "))
        : this.#fill(script.skippedText ?? "Understood, I will not ask again and will carry on without an answer.");
    await this.#planner({ text });
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
