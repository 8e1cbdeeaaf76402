/**
 * The engine's file edits and creations on `agy-bridge sim --tui-version
 * 1.2`: the scenarios of fixtures/scenarios (file-edit-gate,
 * file-create-gate, file-create-outside-gate) park a CODE_ACTION or
 * WRITE_TO_FILE step on a filePermission gate, and the 1.2 TUI draws
 * `Pending edit` or `Create file` from it (spike-notes §13 #32, K5, K6, K8,
 * §16.2). Real tmux on a private socket, the real simulator in the pane,
 * `agy-bridge screen` reading it; what the keys did is read back over RPC.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";
import { composer, rows, startSimPane, type SimPane, type WireStep } from "./support/sim-pane.js";

const DONE = "CORTEX_STEP_STATUS_DONE";
const RUNNING = "CORTEX_STEP_STATUS_RUNNING";
const WAITING = "CORTEX_STEP_STATUS_WAITING";
const CANCELED = "CORTEX_STEP_STATUS_CANCELED";
const CODE_ACTION = "CORTEX_STEP_TYPE_CODE_ACTION";
const WRITE_TO_FILE = "CORTEX_STEP_TYPE_WRITE_TO_FILE";
const INTERRUPTED = "⎿  Interrupted · What should Antigravity CLI do instead?";

const EDIT_TURN = "Fix the greeting in hello.ts";
const CREATE_TURN = "Add a notes file";
const OUTSIDE_TURN = "Save a reminder in my home folder";

/** What these tests read of a step beyond sim-pane's shape. */
interface FileStep extends WireStep {
  requestedInteraction?: { filePermission?: { absolutePathUri?: string } };
  metadata?: { toolCall?: { name?: string }; internalMetadata?: { statusTransitions?: { updatedStatus: string }[] } };
}

let tmux: PrivateTmux;

beforeAll(() => {
  tmux = createPrivateTmux();
});

afterAll(async () => {
  await tmux.kill();
});

/** The simulator with its own scenarios (fixtures/scenarios), agy 1.2.x's TUI. */
function sim(flags: string[] = []): Promise<SimPane> {
  return startSimPane(tmux, ["--tui-version", "1.2", ...flags]);
}

async function gate(pane: SimPane, turn: string, question: string): Promise<{ index: number; screen: string; step: FileStep }> {
  await pane.typeTurn(turn);
  const index = await pane.waitingStep();
  const screen = await pane.waitFor((s) => s.includes(question), `the dialog asking "${question}"`);
  const step = (await pane.steps())[index] as FileStep;
  return { index, screen, step };
}

/** `agy-bridge screen --pane … --json` on the simulator's pane. */
async function screenJson(pane: SimPane): Promise<{
  state: string;
  prompt: { kind: string; fileAction?: string; question: string | null; options: { number: number | null; label: string }[] } | null;
}> {
  const cli = await runMain(["screen", "--pane", `=${pane.target}`, "-L", tmux.socketName, "--json"]);
  expect(cli.stderr).toBe("");
  expect(cli.code).toBe(0);
  return JSON.parse(cli.stdout) as Awaited<ReturnType<typeof screenJson>>;
}

const statuses = (step: FileStep): string[] => (step.metadata?.internalMetadata?.statusTransitions ?? []).map((t) => t.updatedStatus);
const allowEcho = (step: FileStep): unknown => (step.completedInteractions?.[0]?.response?.filePermission as { allow?: boolean } | undefined)?.allow;

describe("Pending edit from a CODE_ACTION step (spike-notes §13 #32, K6, K8)", () => {
  it("draws Pending edit with its diff and two options; agy-bridge screen reads fileAction edit with 2 options", async () => {
    const pane = await sim();
    const { screen, step } = await gate(pane, EDIT_TURN, "Accept this file edit?");
    expect(step.type).toBe(CODE_ACTION);
    expect(step.metadata?.toolCall?.name).toBe("replace_file_content");
    expect(step.requestedInteraction?.filePermission?.absolutePathUri).toBe("file:///home/sim/project/src/hello.ts");
    const lines = rows(screen);
    const at = lines.indexOf("Pending edit");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 2, at + 11)).toEqual([
      "",
      "/home/sim/project/src/hello.ts  +1 -1",
      '   1 -  console.log("helo, world");',
      '   1 +  console.log("hello, world");',
      "",
      "  shift+tab to auto-approve file edits",
      "Accept this file edit?",
      "> 1. Yes, accept this change",
      "  2. No, reject this change",
    ]);
    expect(composer(screen)).toEqual([]);
    const model = await screenJson(pane);
    expect(model.state).toBe("prompt");
    expect(model.prompt).toMatchObject({ kind: "file", fileAction: "edit", question: "Accept this file edit?" });
    expect(model.prompt?.options.map((o) => o.label)).toEqual(["Yes, accept this change", "No, reject this change"]);
  });

  it("1 accepts at once: the edit step runs (RUNNING, then DONE, allow echoed) and the turn goes on", async () => {
    const pane = await sim();
    const { index } = await gate(pane, EDIT_TURN, "Accept this file edit?");
    await pane.keys("1");
    const step = (await pane.stepUntil(index, (s) => s.status === DONE, "the accepted edit")) as FileStep;
    expect(statuses(step)).toEqual(["CORTEX_STEP_STATUS_PENDING", WAITING, RUNNING, DONE]);
    expect(allowEcho(step)).toBe(true);
    await pane.waitFor((s) => s.includes("I fixed the typo") && s.includes("? for shortcuts"), "the reply after the edit");
  });

  it("2 rejects at once: the step is declined without running and the turn ends with the rejection", async () => {
    const pane = await sim();
    const { index } = await gate(pane, EDIT_TURN, "Accept this file edit?");
    await pane.keys("2");
    const step = (await pane.stepUntil(index, (s) => s.status === DONE, "the rejected edit")) as FileStep;
    expect(statuses(step)).toEqual(["CORTEX_STEP_STATUS_PENDING", WAITING, DONE]);
    expect(allowEcho(step)).toBeUndefined();
    const screen = await pane.waitFor((s) => s.includes("You rejected the edit") && s.includes("? for shortcuts"), "the rejection reply");
    expect(screen).not.toContain("I fixed the typo");
    expect(rows(screen)).toContain("● Edit(/home/sim/project/src/hello.ts) (ctrl+o to expand)");
  });

  it("Escape does nothing: the dialog stays, the step stays WAITING, the turn is not interrupted", async () => {
    const pane = await sim();
    const { index } = await gate(pane, EDIT_TURN, "Accept this file edit?");
    await pane.keys("Escape");
    // A key after the Escape proves the Escape was read: Down moves the pointer on the dialog still open.
    await pane.keys("Down");
    const screen = await pane.waitFor((s) => s.includes("> 2. No, reject this change"), "the pointer moved on the same dialog");
    expect(screen).not.toContain(INTERRUPTED);
    expect((await pane.steps())[index]?.status).toBe(WAITING);
    expect(await pane.runStatus()).not.toBe("CASCADE_RUN_STATUS_IDLE");
  });
});

describe("Create file from a WRITE_TO_FILE step (spike-notes §13 #32, K5, K8)", () => {
  it("inside the workspace: Create file with its lines and two options; agy-bridge screen reads fileAction create with 2 options", async () => {
    const pane = await sim();
    const { screen, step } = await gate(pane, CREATE_TURN, "Allow creation of this file?");
    expect(step.type).toBe(WRITE_TO_FILE);
    expect(step.metadata?.toolCall?.name).toBe("write_to_file");
    const lines = rows(screen);
    const at = lines.indexOf("Create file");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 3, at + 11)).toEqual([
      "/home/sim/project/NOTES.md  +3",
      "   1 +  # Notes",
      // tmux's capture drops the blank line's trailing spaces.
      "   2 +",
      "   3 +  - try the simulator",
      "",
      "Allow creation of this file?",
      "> 1. Yes, allow creation",
      "  2. No, deny creation",
    ]);
    expect(screen).not.toContain("Reason: outside workspace");
    const model = await screenJson(pane);
    expect(model.prompt).toMatchObject({ kind: "file", fileAction: "create", question: "Allow creation of this file?" });
    expect(model.prompt?.options).toHaveLength(2);
  });

  it("outside the workspace: Reason: outside workspace and three options, No is 3; agy-bridge screen reads 3 options", async () => {
    const pane = await sim();
    const { screen } = await gate(pane, OUTSIDE_TURN, "Allow creation of this file?");
    const lines = rows(screen);
    const at = lines.indexOf("Allow creation of this file?");
    expect(lines).toContain("Reason: outside workspace");
    expect(lines.slice(at, at + 4)).toEqual([
      "Allow creation of this file?",
      "> 1. Yes, allow creation",
      "  2. Yes, and always allow non-workspace access",
      "  3. No, deny creation",
    ]);
    const model = await screenJson(pane);
    expect(model.prompt).toMatchObject({ kind: "file", fileAction: "create" });
    expect(model.prompt?.options.map((o) => o.number)).toEqual([1, 2, 3]);
  });

  it("inside: 1 allows at once and the creation runs; outside: 3 denies at once and it is declined", async () => {
    const inside = await sim();
    const created = await gate(inside, CREATE_TURN, "Allow creation of this file?");
    await inside.keys("1");
    const ran = (await inside.stepUntil(created.index, (s) => s.status === DONE, "the allowed creation")) as FileStep;
    expect(statuses(ran)).toContain(RUNNING);
    expect(allowEcho(ran)).toBe(true);
    await inside.waitFor((s) => s.includes("I created NOTES.md"), "the reply after the creation");

    const outside = await sim();
    const denied = await gate(outside, OUTSIDE_TURN, "3. No, deny creation");
    await outside.keys("3");
    const declined = (await outside.stepUntil(denied.index, (s) => s.status === DONE, "the denied creation")) as FileStep;
    expect(statuses(declined)).not.toContain(RUNNING);
    expect(allowEcho(declined)).toBeUndefined();
    await outside.waitFor((s) => s.includes("You denied creating ~/reminder.txt"), "the denial reply");
  });

  it("Escape cancels the tool call and ends the turn: the step is CANCELED over RPC, never run, and agy's Interrupted line shows", async () => {
    const pane = await sim();
    const { index } = await gate(pane, CREATE_TURN, "Allow creation of this file?");
    await pane.keys("Escape");
    const step = (await pane.stepUntil(index, (s) => s.status === CANCELED, "the cancelled creation")) as FileStep;
    expect(statuses(step)).not.toContain(RUNNING);
    const screen = await pane.waitFor((s) => s.includes(INTERRUPTED) && s.includes("? for shortcuts"), "the Interrupted line");
    expect(rows(screen)).toContain("● Create(/home/sim/project/NOTES.md) (ctrl+o to expand)");
    expect(screen).not.toContain("I created NOTES.md");
    await until(async () => (await pane.runStatus()) === "CASCADE_RUN_STATUS_IDLE", "the turn to have ended");
  });
});
