/**
 * USER_INPUT steps. They settle at once; agy 1.0.10 gives them no
 * `stepIndex` and the same trajectory id in every turn (spike-notes §4.6), so
 * each is deduplicated by its discriminator. The first sighting opens the
 * turn, names a changed model and carries the user's text.
 */
import type { EventSink, StepWhere } from "./event-sink.js";
import { discriminator, userPlanModel, userText, type JsonObject } from "./step-access.js";
import type { StepFields } from "./step-check.js";
import type { TurnState } from "./turn-state.js";

/** The USER_INPUT steps one tracker has seen, and the last model they named. */
export class UserInputs {
  /** Settled USER_INPUT keys (`trajectoryId \0 discriminator`). */
  #seen = new Set<string>();
  #lastModel: string | undefined;

  constructor(
    readonly sink: EventSink,
    readonly turn: TurnState,
  ) {}

  /** A USER_INPUT sighting: its events the first time, nothing after. */
  settle(raw: JsonObject, fields: StepFields, where: StepWhere): void {
    const disc = discriminator(raw) ?? `i:${where.stepIndex ?? "?"}`;
    const key = `${where.trajectoryId}\u0000${disc}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    this.turn.start(where);
    const sink = this.sink;
    const body = fields.body;
    const model = userPlanModel(body);
    if (model !== undefined && model !== this.#lastModel) {
      const previous = this.#lastModel;
      this.#lastModel = model;
      sink.push({
        type: "model_changed",
        conversationId: sink.conversationId,
        ...where,
        model,
        ...(previous === undefined ? {} : { previousModel: previous }),
      });
    }
    const text = userText(body);
    if (text === "") return;
    const { trajectoryId, stepIndex } = where;
    sink.push(
      stepIndex === undefined
        ? { type: "user_message", conversationId: sink.conversationId, trajectoryId, text }
        : { type: "user_message", conversationId: sink.conversationId, trajectoryId, stepIndex, text },
    );
  }
}
