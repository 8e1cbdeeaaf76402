/**
 * Pre-populated conversations, for benchmarks of a supervisor of many long
 * conversations (issue 23): one simulator process hosting N conversations of
 * M settled steps each. The steps are the simulator's own, played once on a
 * private engine (a plain answer, read-only tools, a thinking answer) and
 * copied turn after turn with each copy's own ids and index, so every
 * conversation reads like a long history agy wrote.
 */
import { randomUUID } from "node:crypto";
import type { JsonObject } from "../../protocol/json.js";
import { createSimEngine, type SimEngine } from "./engine.js";
import type { Scenario } from "./scenario-schema.js";
import type { SimConversation } from "./conversation.js";

export interface PopulateOptions {
  conversations: number;
  /** Settled steps per conversation. */
  steps: number;
}

/** Turns played once for the template (texts the bundled scenarios match; any other falls back to the echo scenario). */
const TEMPLATE_TURNS = ["Say hello in one short sentence.", "Summarize the project", "Think about it: what is a monad?"];

/** The settled steps of a few gate-free turns, played at full speed. */
async function templateSteps(scenarios: Scenario[]): Promise<JsonObject[]> {
  const seed = createSimEngine({ scenarios, speed: 0 });
  try {
    const conversation = seed.startHeadless(randomUUID());
    for (const text of TEMPLATE_TURNS) {
      conversation.submit(text);
      await conversation.whenIdle();
    }
    return conversation.steps.map((step) => structuredClone(step) as unknown as JsonObject);
  } finally {
    seed.close();
  }
}

/** Copy `copy` of a template step, placed at `index` of `conversation`. */
function placed(step: JsonObject, conversation: SimConversation, index: number, copy: number): JsonObject {
  const out = structuredClone(step);
  const metadata = out["metadata"] as JsonObject | undefined;
  if (metadata !== undefined) {
    // A distinct execution per copy: USER_INPUT steps are told apart by it (spike-notes §4.6).
    if (typeof metadata["executionId"] === "string") metadata["executionId"] = `${metadata["executionId"]}-${copy}`;
    const info = metadata["sourceTrajectoryStepInfo"] as JsonObject | undefined;
    if (info !== undefined) {
      info["trajectoryId"] = conversation.trajectoryId;
      info["cascadeId"] = conversation.id;
      if ("stepIndex" in info || (index !== 0 && out["type"] !== "CORTEX_STEP_TYPE_USER_INPUT")) {
        if (index === 0) delete info["stepIndex"];
        else info["stepIndex"] = index;
      }
    }
  }
  return out;
}

/** Adds `conversations` headless conversations of `steps` settled steps each; returns their ids. */
export async function populateConversations(engine: SimEngine, scenarios: Scenario[], options: PopulateOptions): Promise<string[]> {
  const template = await templateSteps(scenarios);
  if (template.length === 0) return [];
  const ids: string[] = [];
  for (let n = 0; n < options.conversations; n++) {
    const conversation = engine.startHeadless(randomUUID());
    for (let index = 0; index < options.steps; index++) {
      conversation.steps.push(placed(template[index % template.length]!, conversation, index, Math.floor(index / template.length)) as never);
    }
    ids.push(conversation.id);
  }
  return ids;
}
