/**
 * Every input the mapper has fixtures for, played through a fresh tracker
 * each: the step fixtures (fixtures/steps), the real captures
 * (fixtures/captures), a capture-built history, and every simulator scenario
 * played in-process on a manual clock (each step version applied as it
 * changes, gates answered from the TUI port, then the finished history
 * replayed). The events of each run are what `events-pinned.test.ts`
 * compares with the pinned file, byte for byte.
 *
 * Random ids (the simulator's conversation and trajectory UUIDs, and the
 * interaction ids derived from them) are replaced by `<uuid-N>` in order of
 * appearance, so the runs are deterministic.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTrajectoryTracker, type MapperEvent, type TrajectoryTracker } from "../../../src/mapper/index.js";
import type { StreamUpdate } from "../../../src/protocol/wire-schemas.js";
import { createSimEngine } from "../../../src/sim/engine/engine.js";
import type { Scenario } from "../../../src/sim/engine/scenario-schema.js";
import { loadScenarios } from "../../../src/sim/engine/scenarios.js";
import { FakeClock } from "../../sim/support/fake-clock.js";
import { CAPTURES, CID, FIXTURES } from "../load.js";

export interface PinnedRun {
  name: string;
  events: MapperEvent[];
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|int_[0-9a-f]{16}/g;

/** One NDJSON line per run, random UUIDs named by order of appearance. */
export function serializeRun(run: PinnedRun, keepIds: ReadonlySet<string>): string {
  const names = new Map<string, string>();
  const json = JSON.stringify({ run: run.name, events: run.events });
  return json.replace(UUID, (id) => {
    // An interaction id before any random id (events name their conversation first) is derived from fixed ids: kept.
    if (keepIds.has(id) || (id.startsWith("int_") && names.size === 0)) return id;
    let name = names.get(id);
    if (name === undefined) {
      name = `<uuid-${names.size + 1}>`;
      names.set(id, name);
    }
    return name;
  });
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

function play(apply: (tracker: TrajectoryTracker) => MapperEvent[][]): MapperEvent[] {
  const tracker = createTrajectoryTracker({ conversationId: CID });
  return apply(tracker).flat();
}

/** Step fixtures: a page (`steps`) as a snapshot, frames one by one, a single step alone and as a stream frame at index 3. */
export function fixtureRuns(): PinnedRun[] {
  const runs: PinnedRun[] = [];
  for (const file of readdirSync(FIXTURES).sort()) {
    const path = join(FIXTURES, file);
    if (file.endsWith(".ndjson")) {
      const updates = readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => (JSON.parse(l) as { update: StreamUpdate }).update);
      runs.push({ name: `steps/${file}`, events: play((t) => updates.map((u) => t.applyStreamUpdate(u))) });
      continue;
    }
    if (!file.endsWith(".json")) continue;
    const { _provenance: _, ...data } = readJson(path);
    if (Array.isArray(data["steps"])) {
      runs.push({ name: `steps/${file} snapshot`, events: play((t) => [t.applySnapshot({ steps: data["steps"] as unknown[] })]) });
      runs.push({
        name: `steps/${file} paged`,
        events: play((t) => (data["steps"] as unknown[]).map((s, i) => t.applySnapshot({ steps: [s], stepOffset: i }))),
      });
      continue;
    }
    runs.push({ name: `steps/${file} alone`, events: play((t) => [t.applySteps([data])]) });
    runs.push({
      name: `steps/${file} frame`,
      events: play((t) => [
        t.applyStreamUpdate({ conversationId: CID, mainTrajectoryUpdate: { stepsUpdate: { indices: [3], steps: [data], totalLength: 4 } } } as StreamUpdate),
      ]),
    });
  }
  return runs;
}

function captureSteps(): Record<string, unknown>[] {
  return readdirSync(CAPTURES)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const { _fixtureProvenance: _, ...step } = readJson(join(CAPTURES, f));
      return step;
    });
}

/** Captures: each alone, all as one page, and a 60-step history built from them (as the bench builds 10,000). */
export function captureRuns(): PinnedRun[] {
  const steps = captureSteps();
  const files = readdirSync(CAPTURES)
    .filter((f) => f.endsWith(".json"))
    .sort();
  const runs: PinnedRun[] = steps.map((step, i) => ({ name: `captures/${files[i]}`, events: play((t) => [t.applySteps([step])]) }));
  runs.push({ name: "captures as one page", events: play((t) => [t.applySnapshot({ steps })]) });
  const history = Array.from({ length: 60 }, (_, index) => {
    const step = structuredClone(steps[index % steps.length]!) as { metadata?: { sourceTrajectoryStepInfo?: { stepIndex?: number } } };
    const info = step.metadata?.sourceTrajectoryStepInfo;
    if (info !== undefined) {
      if (index === 0) delete info.stepIndex;
      else info.stepIndex = index;
    }
    return step;
  });
  runs.push({ name: "captures, 60-step history, one page", events: play((t) => [t.applySnapshot({ steps: history })]) });
  runs.push({
    name: "captures, 60-step history, read twice (reconcile)",
    events: play((t) => [t.applySnapshot({ steps: history }), t.markReconnected(), t.applySnapshot({ steps: history })]),
  });
  return runs;
}

/** A user turn the scenario answers (as read-paths-diff.test.ts types it). */
function turnText(scenario: Scenario): string {
  const match = scenario.match;
  if ("text" in match) return match.text;
  if ("regex" in match) return `${match.regex.replace(/^\^/, "").replace(/\\(.)/g, "$1")}tests and fixtures`;
  return "Hello there";
}

/**
 * One scenario on the engine: every changed step version applied as a
 * one-step page at its index (and the run status after each change), each
 * gate answered once from the TUI (allowed, or its first option(s); `deny`
 * denies), then the finished history replayed through a fresh tracker.
 */
async function scenarioRun(scenarios: Scenario[], scenario: Scenario, deny: boolean): Promise<PinnedRun[]> {
  const clock = new FakeClock();
  const engine = createSimEngine({ scenarios, clock, speed: 1, interactionTimeoutMs: 600_000 });
  try {
    const port = engine.tuiPort();
    const conversation = engine.conversation(engine.activeConversationId)!;
    const tracker = createTrajectoryTracker({ conversationId: conversation.id });
    const live: MapperEvent[] = [];
    conversation.subscribe((indices) => {
      for (const index of indices) {
        live.push(...tracker.applySnapshot({ steps: [structuredClone(conversation.steps[index])], stepOffset: index }));
      }
      live.push(...tracker.applyRunStatus({ status: conversation.runStatus, fullyIdle: conversation.fullyIdle }));
    });
    port.submitTurn(turnText(scenario));
    const answered = new Set<number>();
    for (let round = 0; round < 400; round++) {
      await clock.advance(250);
      const pending = port.view().pending;
      if (pending !== undefined && !answered.has(pending.stepIndex)) {
        answered.add(pending.stepIndex);
        if (pending.kind === "permission") port.answer(pending.stepIndex, { kind: "permission", allow: !deny });
        else {
          const first = pending.questions[0];
          const ids = (first?.options ?? []).slice(0, first?.multiSelect === true ? 2 : 1).map((o) => o.id);
          port.answer(pending.stepIndex, { kind: "question", selectedOptionIds: ids });
        }
      }
      if (!conversation.running && port.view().pending === undefined) break;
    }
    const replay = createTrajectoryTracker({ conversationId: conversation.id }).applySnapshot({ steps: structuredClone(conversation.steps) });
    const name = `scenario ${JSON.stringify(scenario.description ?? turnText(scenario))}${deny ? " denied" : ""}`;
    return [
      { name: `${name} live`, events: live },
      { name: `${name} replay`, events: replay },
    ];
  } finally {
    engine.close();
  }
}

export async function scenarioRuns(): Promise<PinnedRun[]> {
  const scenarios = await loadScenarios();
  const runs: PinnedRun[] = [];
  for (const scenario of scenarios) {
    runs.push(...(await scenarioRun(scenarios, scenario, false)));
    const gated = scenario.steps.some((s) => (s as { kind?: string }).kind === "command" || (s as { kind?: string }).kind === "viewFile");
    if (gated) runs.push(...(await scenarioRun(scenarios, scenario, true)));
  }
  return runs;
}

/** Every run, in a fixed order. */
export async function allPinnedRuns(): Promise<PinnedRun[]> {
  return [...fixtureRuns(), ...captureRuns(), ...(await scenarioRuns())];
}

/** Ids the fixtures fix themselves: kept as they are. */
export function fixedIds(): Set<string> {
  return new Set([CID, "d24e8b90-5a17-4c3e-8f02-6b9e1a7c4f35", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e", "efb134b2-d69f-43de-bb54-c9ece346d8a3"]);
}
