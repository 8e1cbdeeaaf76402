/**
 * The simulated agy: several conversations on one server, each playing
 * scenario turns, plus the {@link SimTuiPort} the fake TUI drives.
 */
import { randomUUID } from "node:crypto";
import type { AgyBridgeError } from "../../errors.js";
import { asObject } from "../../protocol/json.js";
import { STEP_TYPE } from "../../protocol/wire-names.js";
import { SimConversation, type SimInteraction, type SubagentLineage, type TurnPlayer } from "./conversation.js";
import type { Scenario } from "./scenario-schema.js";
import { createWireStamper, systemClock, type SimClock } from "./sim-clock.js";
import { buildTuiView } from "../tui/tui-view.js";
import type { SimTuiPort, TuiAnswer } from "../tui/tui-port.js";
import { createTurnPlayer } from "./turn-player.js";
import type { SubagentSpawn } from "./turn-scope.js";

export interface SimEngine {
  /** The conversation the TUI shows (changes on /clear). */
  readonly activeConversationId: string;
  /** A SimTuiPort bound to the active conversation; follows /clear rotations. */
  tuiPort(): SimTuiPort;
  /** Stops timers (scenario delays, interaction timeouts). */
  close(): void;
  /** A hosted conversation by id (root, /clear-minted or StartCascade-made). */
  conversation(id: string): SimConversation | undefined;
  /** Every hosted conversation, oldest first. */
  conversations(): SimConversation[];
  /** A conversation the TUI never shows (StartCascade); `id` defaults to a fresh UUID. */
  startHeadless(id?: string): SimConversation;
  /** `/clear`: a new root conversation becomes active. */
  rotate(): SimConversation;
  /** The model enum a turn's steps carry when its sender names none. */
  readonly model: string;
  /** Calls `listener` with every conversation created from now on (/clear, StartCascade, sub-agents); returns the unsubscribe function. */
  onConversation(listener: (conversation: SimConversation) => void): () => void;
}

export interface SimEngineOptions {
  scenarios: readonly Scenario[];
  clock?: SimClock;
  /** Multiplies every scenario delay. Default 1. */
  speed?: number;
  /** Default 300_000. */
  interactionTimeoutMs?: number;
  /** The model of turns sent without one (the TUI's). Default `MODEL_PLACEHOLDER_M20`. */
  model?: string;
  /**
   * Told when a turn fails inside the simulator (a bug or a broken injected
   * effect); the turn's open steps are then ERROR with the reason in
   * `step.error`. Default: the failure is only visible on the wire.
   */
  onError?: (error: AgyBridgeError) => void;
}

/** Makes a simulated agy without a language server (`startSimServer` makes one of its own). */
export function createSimEngine(options: SimEngineOptions): SimEngine {
  return new Engine(options);
}

class Engine implements SimEngine {
  readonly model: string;
  readonly #conversations = new Map<string, SimConversation>();
  readonly #stamp: () => string;
  readonly #play: TurnPlayer;
  readonly #tuiListeners = new Set<() => void>();
  readonly #conversationListeners = new Set<(conversation: SimConversation) => void>();
  readonly #onError: (error: AgyBridgeError) => void;
  #active: SimConversation;
  #unbindActive: () => void = () => undefined;

  constructor(options: SimEngineOptions) {
    const clock = options.clock ?? systemClock;
    this.model = options.model ?? "MODEL_PLACEHOLDER_M20";
    this.#stamp = createWireStamper(clock);
    this.#onError = options.onError ?? (() => undefined);
    this.#play = createTurnPlayer({
      scenarios: options.scenarios,
      clock,
      speed: options.speed ?? 1,
      interactionTimeoutMs: options.interactionTimeoutMs ?? 300_000,
      stamp: this.#stamp,
      spawnSubagent: (parent, spawn) => this.#spawnSubagent(parent, spawn),
    });
    this.#active = this.#create(randomUUID(), false);
    this.#bindActive();
  }

  get activeConversationId(): string {
    return this.#active.id;
  }

  conversation(id: string): SimConversation | undefined {
    return this.#conversations.get(id);
  }

  conversations(): SimConversation[] {
    return [...this.#conversations.values()];
  }

  startHeadless(id: string = randomUUID()): SimConversation {
    return this.#conversations.get(id) ?? this.#create(id, true);
  }

  rotate(): SimConversation {
    this.#active = this.#create(randomUUID(), false);
    this.#bindActive();
    this.#notifyTui();
    return this.#active;
  }

  onConversation(listener: (conversation: SimConversation) => void): () => void {
    this.#conversationListeners.add(listener);
    return () => this.#conversationListeners.delete(listener);
  }

  close(): void {
    this.#unbindActive();
    for (const conversation of this.#conversations.values()) conversation.close();
  }

  tuiPort(): SimTuiPort {
    return {
      view: () => buildTuiView(this.#active),
      subscribe: (listener) => {
        this.#tuiListeners.add(listener);
        return () => this.#tuiListeners.delete(listener);
      },
      submitTurn: (text) => this.#active.submit(text),
      answer: (stepIndex, answer) => this.#answerFromTui(stepIndex, answer),
      cancel: () => this.#active.interrupt(),
      interruptTurn: () => {
        // agy 1.2.x Esc at an approval: the tool call is cancelled and the turn ends, parked or not (spike-notes K5).
        const running = this.#active.running;
        this.#active.forceStop({ dropQueued: false });
        return running;
      },
      clear: () => void this.rotate(),
      setModel: (model) => {
        this.#active.model = model;
        this.#notifyTui();
      },
    } satisfies SimTuiPort;
  }

  #create(id: string, headless: boolean, lineage?: SubagentLineage): SimConversation {
    const conversation = new SimConversation({
      id,
      trajectoryId: randomUUID(),
      headless,
      createdTime: this.#stamp(),
      play: this.#play,
      stamp: this.#stamp,
      model: this.model,
      ...(lineage !== undefined ? { lineage } : {}),
      onError: this.#onError,
    });
    this.#conversations.set(id, conversation);
    for (const listener of [...this.#conversationListeners]) listener(conversation);
    return conversation;
  }

  /** A sub-agent: a conversation of its own that the TUI never shows, playing the parent's script for it. */
  #spawnSubagent(parent: SimConversation, spawn: SubagentSpawn): SimConversation {
    const child = this.#create(randomUUID(), true, {
      parentConversationId: parent.id,
      rootConversationId: parent.lineage?.rootConversationId ?? parent.id,
      nestingDepth: (parent.lineage?.nestingDepth ?? 0) + 1,
      typeName: spawn.typeName,
      role: spawn.role,
    });
    child.submit(spawn.prompt, { model: parent.model, script: spawn.steps });
    return child;
  }

  #bindActive(): void {
    this.#unbindActive();
    this.#unbindActive = this.#active.subscribe(() => this.#notifyTui());
  }

  #notifyTui(): void {
    for (const listener of [...this.#tuiListeners]) listener();
  }

  #answerFromTui(stepIndex: number, answer: TuiAnswer): boolean {
    const conversation = this.#active;
    const step = conversation.steps[stepIndex];
    if (step === undefined) return false;
    const isQuestion = step.type === STEP_TYPE.ASK_QUESTION;
    // A file-permission gate is answered in its own variant (agy's schema, spike-notes §11).
    const variant = asObject(step.requestedInteraction)?.filePermission !== undefined ? "filePermission" : "permission";
    const interaction: SimInteraction = { trajectoryId: conversation.trajectoryId, stepIndex };
    if (answer.kind === "permission") {
      interaction[variant] = answer.allow ? { allow: true } : {};
    } else if (answer.kind === "question") {
      const questions = (asObject(step.askQuestion)?.questions ?? []) as { question: string }[];
      if (answer.responses !== undefined) {
        // agy 1.2.x forms answer each question in turn (spike-notes §13 #33, K9). A skipped question keeps
        // its place as a bare {question}, so no answer can slide onto the question before it.
        const given = answer.responses;
        const responses = questions.map((q, i) => {
          const r = given[i];
          return {
            question: q.question,
            ...(r !== undefined && r.selectedOptionIds.length > 0 ? { selectedOptionIds: r.selectedOptionIds } : {}),
            ...(r?.writeIn !== undefined && r.writeIn !== "" ? { writeInResponse: r.writeIn } : {}),
          };
        });
        const answeredAny = responses.some((r) => "selectedOptionIds" in r || "writeInResponse" in r);
        interaction.askQuestion = answeredAny ? { responses } : {};
        return conversation.deliver(stepIndex, interaction);
      }
      // The TUI answers the first question only (agy 1.0.10 TUI, spike-notes §5.6).
      const first = questions[0];
      interaction.askQuestion =
        first === undefined || answer.selectedOptionIds.length === 0
          ? {}
          : { responses: [{ question: first.question, selectedOptionIds: answer.selectedOptionIds }] };
    } else if (isQuestion) {
      interaction.askQuestion = {};
    } else {
      interaction[variant] = {};
    }
    return conversation.deliver(stepIndex, interaction);
  }
}
