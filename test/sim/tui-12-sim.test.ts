/**
 * `agy-bridge sim --tui-version 1.2` — the real engine and language server
 * with the agy 1.2.x TUI in a real tmux pane (private socket), played with
 * the keys of agy 1.2.x (docs/spike-notes.md §13 #26–#39, K1–K16, §16).
 * Every test starts its own simulator, so tests never
 * see each other's turns; what the TUI did is read back over RPC.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";
import { composer, ROOT, rows, startSimPane, type SimPane, type WireStep } from "./support/sim-pane.js";

const RUN = "CORTEX_STEP_TYPE_RUN_COMMAND";
const USER = "CORTEX_STEP_TYPE_USER_INPUT";
const DONE = "CORTEX_STEP_STATUS_DONE";
const RUNNING = "CORTEX_STEP_STATUS_RUNNING";
const CANCELED = "CORTEX_STEP_STATUS_CANCELED";
const INTERRUPTED = "  ⎿  Interrupted · What should Antigravity CLI do instead?";

let tmux: PrivateTmux;
let dir: string;
let scenarios: string;

const SCENARIOS = {
  "pwd.json": {
    description: "One gated command that runs at once.",
    match: { text: "Run pwd" },
    steps: [
      { kind: "command", commandLine: "pwd", output: "/home/sim/project\n" },
      { kind: "planner", text: "The current directory is `/home/sim/project`." },
    ],
  },
  "long-build.json": {
    description: "A gated command that keeps running once approved (until cancelled).",
    match: { text: "Run the long build" },
    steps: [
      { kind: "command", commandLine: "make build", output: "built\n", runMs: 600000 },
      { kind: "planner", text: "The build finished." },
    ],
  },
  "two-questions.json": {
    description: "One ask_question call with two questions.",
    match: { text: "Ask me two things" },
    steps: [
      {
        kind: "question",
        questions: [
          { question: "Which colour?", options: ["Red", "Green", "Blue"] },
          { question: "Which pet?", options: ["Cat", "Dog"] },
        ],
        answeredText: "You chose: {{answer}}.",
      },
    ],
  },
  "profile.json": {
    description: "A file read outside the workspace behind a filePermission gate.",
    match: { text: "Read my shell profile" },
    steps: [
      { kind: "viewFile", path: "/home/sim/.bashrc", numLines: 3, numBytes: 40, askFilePermission: true },
      { kind: "planner", text: "Your profile sets PATH." },
    ],
  },
  "slow-story.json": {
    description: "A reply that generates until cancelled.",
    match: { text: "Tell me a long story" },
    steps: [{ kind: "planner", text: "Once upon a time there was a very long story.", chunks: 4, chunkDelayMs: 600000 }],
  },
  "echo.json": { description: "Anything else.", match: { default: true }, steps: [{ kind: "planner", text: "Noted." }] },
};

beforeAll(() => {
  tmux = createPrivateTmux();
  dir = mkdtempSync(join(tmpdir(), "agy-tui12-"));
  scenarios = join(dir, "scenarios");
  mkdirSync(scenarios);
  for (const [name, body] of Object.entries(SCENARIOS)) writeFileSync(join(scenarios, name), JSON.stringify(body));
});

afterAll(async () => {
  await tmux.kill();
  rmSync(dir, { recursive: true, force: true });
});

function sim(flags: string[] = [], speed = "0"): Promise<SimPane> {
  return startSimPane(tmux, ["--tui-version", "1.2", "--scenarios", scenarios, ...flags], { speed });
}

const dialogOpen = (s: string): boolean => s.includes("Run this command?") && s.includes("4. No, cancel");

async function commandDialog(pane: SimPane, turn = "Run pwd"): Promise<{ index: number; screen: string }> {
  await pane.typeTurn(turn);
  const index = await pane.waitingStep();
  const screen = await pane.waitFor(dialogOpen, "the 1.2 command dialog");
  return { index, screen };
}

function approveOverRpc(pane: SimPane, index: number): Promise<unknown> {
  return pane.rpc("HandleCascadeUserInteraction", {
    cascadeId: pane.conversationId,
    interaction: { trajectoryId: pane.trajectoryId, stepIndex: index, permission: { allow: true } },
  });
}

const userTurns = (steps: WireStep[]): (string | undefined)[] => steps.filter((s) => s.type === USER).map((s) => s.userInput?.userResponse);

describe("the 1.2 command dialog (spike-notes K1, §13 #29, K2, K5)", () => {
  it("draws Run this command? with Yes, run command … 4. No, cancel and no composer", async () => {
    const pane = await sim();
    const { screen } = await commandDialog(pane);
    const lines = rows(screen);
    const at = lines.indexOf("Run this command?");
    expect(lines.slice(at, at + 8)).toEqual([
      "Run this command?",
      "> 1. Yes, run command",
      "  2. Yes, and always allow in this conversation for commands that start with 'pwd'",
      "  3. Yes, and always allow for commands that start with 'pwd' (Persist to settings.json)",
      "  4. No, cancel",
      "",
      "  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command",
      expect.stringMatching(/^esc to cancel +Gemini · mediu$/),
    ]);
    expect(lines.slice(at - 3, at - 1)).toEqual(["Requesting permission for:", "   pwd"]);
    expect(composer(screen)).toEqual([]);
  });

  it("a digit alone answers at once: 4 declines without Enter", async () => {
    const pane = await sim();
    const { index } = await commandDialog(pane);
    await pane.keys("4");
    const step = await pane.stepUntil(index, (s) => s.status === DONE, "the declined command step");
    expect(step.runCommand?.exitCode).toBeUndefined();
    await pane.waitFor((s) => s.includes("? for shortcuts") && s.includes("User declined the tool call"), "the idle composer after the decline");
  });

  it("a digit then Enter: the digit runs the command and the Enter reaches the composer, not a second answer", async () => {
    const pane = await sim();
    const { index } = await commandDialog(pane);
    await pane.keys("1", "Enter");
    const step = await pane.stepUntil(index, (s) => s.status === DONE && s.runCommand?.exitCode === 0, "the approved command's exit code");
    expect(step.type).toBe(RUN);
    await pane.waitFor((s) => s.includes("The current directory is") && s.includes("? for shortcuts"), "the finished turn");
    expect(userTurns(await pane.steps())).toEqual(["Run pwd"]);
  });

  it("Escape cancels the tool call and ends the turn: the step is CANCELED over RPC, never run, and agy's Interrupted line shows", async () => {
    const pane = await sim();
    const { index } = await commandDialog(pane);
    await pane.keys("Escape");
    const step = await pane.stepUntil(index, (s) => s.status === CANCELED, "the cancelled command step");
    expect(step.runCommand?.exitCode).toBeUndefined();
    const screen = await pane.waitFor((s) => s.includes("? for shortcuts") && s.includes(INTERRUPTED.trim()), "the Interrupted line above the composer");
    const lines = rows(screen);
    const composerTop = lines.lastIndexOf("─".repeat(120), lines.length - 3);
    expect(lines.slice(composerTop - 3, composerTop)).toEqual(["● Bash(pwd) (ctrl+o to expand)", INTERRUPTED, ""]);
    await until(async () => (await pane.runStatus()) === "CASCADE_RUN_STATUS_IDLE", "the turn to have ended");
  });

  it("--tui-command-options 2 draws the two-option dialog, where 2 is No, cancel (spike-notes §13 #30, K3)", async () => {
    const pane = await sim(["--tui-command-options", "2"]);
    await pane.typeTurn("Run pwd");
    const index = await pane.waitingStep();
    const screen = await pane.waitFor((s) => s.includes("Run this command?") && s.includes("2. No, cancel"), "the two-option dialog");
    expect(screen).not.toContain("3. ");
    await pane.keys("2");
    const step = await pane.stepUntil(index, (s) => s.status === DONE, "the declined step");
    expect(step.runCommand?.exitCode).toBeUndefined();
  });
});

describe("the File access dialog from the engine (spike-notes §13 #32, K5, K8)", () => {
  it("draws File access with three options; Escape cancels the read over RPC and ends the turn", async () => {
    const pane = await sim();
    await pane.typeTurn("Read my shell profile");
    const index = await pane.waitingStep();
    const screen = await pane.waitFor((s) => s.includes("Allow access to this file?"), "the File access dialog");
    expect(rows(screen)).toEqual(expect.arrayContaining(["File access", "Read: /home/sim/.bashrc", "Reason: outside workspace", "  3. No, deny access"]));
    await pane.keys("Escape");
    const step = await pane.stepUntil(index, (s) => s.status === CANCELED, "the cancelled file read");
    expect(step.type).toBe("CORTEX_STEP_TYPE_VIEW_FILE");
    await pane.waitFor((s) => s.includes(INTERRUPTED.trim()) && s.includes("? for shortcuts"), "the Interrupted line");
    await until(async () => (await pane.runStatus()) === "CASCADE_RUN_STATUS_IDLE", "the turn to have ended");
  });
});

describe("Tab opens the amend field (spike-notes §13 #31, K4)", () => {
  it("option 1 becomes Yes, and tell Antigravity CLI what to do next, with an input row and enter Submit; the text follows the approval as the next turn", async () => {
    const pane = await sim();
    const { index } = await commandDialog(pane);
    await pane.keys("Tab");
    const amend = await pane.waitFor((s) => s.includes("enter Submit"), "the amend field");
    const lines = rows(amend);
    const at = lines.indexOf("> 1. Yes, and tell Antigravity CLI what to do next");
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe("    > █");
    expect(lines.at(-2)).toBe("  enter Submit");
    await pane.keys("-l", "then say 4 words");
    await pane.waitFor((s) => s.includes("    > then say 4 words█"), "the typed instruction (its digit typed, not answering)");
    await pane.keys("Enter");
    await pane.stepUntil(index, (s) => s.status === DONE && s.runCommand?.exitCode === 0, "the approved command");
    await until(async () => {
      const turns = userTurns(await pane.steps());
      return turns.length === 2 ? turns : undefined;
    }, "the instruction as the next turn");
    expect(userTurns(await pane.steps())).toEqual(["Run pwd", "then say 4 words"]);
  });
});

describe("after an answer over RPC (--tui-stale-dialog)", () => {
  it("close: the dialog closes by itself and the approved command keeps running", async () => {
    const pane = await sim(["--tui-stale-dialog", "close"], "1");
    const { index } = await commandDialog(pane, "Run the long build");
    await approveOverRpc(pane, index);
    await pane.waitFor((s) => !s.includes("Run this command?") && composer(s).length > 0, "the dialog closing by itself");
    expect((await pane.steps())[index]?.status).toBe(RUNNING);
  });

  it("stay: the dialog stays drawn; Escape on it interrupts the resumed turn and cancels the approved command — the key the bridge must never press", async () => {
    const pane = await sim(["--tui-stale-dialog", "stay"], "1");
    const { index } = await commandDialog(pane, "Run the long build");
    await approveOverRpc(pane, index);
    await pane.stepUntil(index, (s) => s.status === RUNNING, "the approved command running");
    expect(dialogOpen(await pane.screen())).toBe(true);
    await pane.keys("Escape");
    await pane.stepUntil(index, (s) => s.status === CANCELED, "the approved command cancelled by Escape");
    await pane.waitFor((s) => s.includes(INTERRUPTED.trim()) && s.includes("? for shortcuts"), "agy's Interrupted line");
  });

  it("stay: a digit on the settled dialog only closes it — the approved command keeps running, nothing is declined", async () => {
    const pane = await sim(["--tui-stale-dialog", "stay"], "1");
    const { index } = await commandDialog(pane, "Run the long build");
    await approveOverRpc(pane, index);
    await pane.stepUntil(index, (s) => s.status === RUNNING, "the approved command running");
    await pane.keys("4");
    const screen = await pane.waitFor((s) => !s.includes("Run this command?"), "the stale dialog closing");
    expect(screen).not.toContain("User declined the tool call");
    expect((await pane.steps())[index]?.status).toBe(RUNNING);
  });
});

describe("question forms (spike-notes §13 #33, K9)", () => {
  it("one digit per question: the first digit moves on to Question 2/2 with ← Back, the last digit submits both answers", async () => {
    const pane = await sim();
    await pane.typeTurn("Ask me two things");
    const index = await pane.waitingStep();
    const first = await pane.waitFor((s) => s.includes("Question 1/2: Which colour?"), "question 1/2");
    expect(rows(first)).toEqual(
      expect.arrayContaining(["? Which colour?", "? Which pet?", "> 1. Red", "  4. Write-in...", "  ↑/↓ Navigate · enter Select · esc Skip"]),
    );
    await pane.keys("2");
    const second = await pane.waitFor((s) => s.includes("Question 2/2: Which pet?"), "question 2/2");
    expect(second).toContain("  ↑/↓ Navigate · enter Select · esc Skip · ← Back");
    expect((await pane.steps())[index]?.status).toBe("CORTEX_STEP_STATUS_WAITING");
    await pane.keys("1");
    const step = await pane.stepUntil(index, (s) => s.status === DONE, "the answered form");
    expect(step.askQuestion?.questions?.map((q) => q.selectedOptionIds)).toEqual([["2"], ["1"]]);
    const done = await pane.waitFor((s) => s.includes("You chose: Green, Cat."), "the answer echoed");
    expect(rows(done)).toEqual(expect.arrayContaining(["? Which colour?", "> Green", "? Which pet?", "> Cat"]));
  });

  it("Escape skips a question: its answer stays empty and the next question's answer never slides onto it", async () => {
    const pane = await sim();
    await pane.typeTurn("Ask me two things");
    const index = await pane.waitingStep();
    await pane.waitFor((s) => s.includes("Question 1/2"), "question 1/2");
    await pane.keys("Escape");
    await pane.waitFor((s) => s.includes("Question 2/2"), "question 2/2");
    await pane.keys("2");
    const step = await pane.stepUntil(index, (s) => s.status === DONE, "the answered form");
    expect(step.askQuestion?.questions?.map((q) => q.selectedOptionIds)).toEqual([undefined, ["2"]]);
  });
});

describe("question forms: ← Back and Write-in (spike-notes §13 #33, K9)", () => {
  it("Left goes back to question 1, whose new digit replaces the first answer", async () => {
    const pane = await sim();
    await pane.typeTurn("Ask me two things");
    const index = await pane.waitingStep();
    await pane.waitFor((s) => s.includes("Question 1/2"), "question 1/2");
    await pane.keys("2");
    await pane.waitFor((s) => s.includes("Question 2/2"), "question 2/2");
    await pane.keys("Left");
    await pane.waitFor((s) => s.includes("Question 1/2"), "question 1/2 again");
    await pane.keys("3");
    await pane.waitFor((s) => s.includes("Question 2/2"), "question 2/2 again");
    await pane.keys("1");
    const step = await pane.stepUntil(index, (s) => s.status === DONE, "the answered form");
    expect(step.askQuestion?.questions?.map((q) => q.selectedOptionIds)).toEqual([["3"], ["1"]]);
  });

  it("Write-in... opens Your answer:, whose text (digits and all) is sent as the write-in", async () => {
    const pane = await sim();
    await pane.typeTurn("Ask me two things");
    await pane.waitFor((s) => s.includes("Question 1/2"), "question 1/2");
    await pane.keys("4");
    await pane.waitFor((s) => s.includes("Your answer: █"), "the write-in field");
    await pane.keys("-l", "Teal 2");
    await pane.waitFor((s) => s.includes("Your answer: Teal 2█") && s.includes("Question 1/2"), "the typed write-in, still on question 1");
    await pane.keys("Enter");
    await pane.waitFor((s) => s.includes("Question 2/2"), "question 2/2");
    await pane.keys("2");
    await pane.waitFor((s) => s.includes("You chose: Teal 2, Dog."), "the write-in in the reply");
  });
});

describe("keys of the 1.2 composer (spike-notes K15)", () => {
  it("Escape while agy generates cancels the reply and leaves agy's Interrupted line right above the composer (spike-notes §13 #39)", async () => {
    const pane = await sim([], "1");
    await pane.typeTurn("Tell me a long story");
    await pane.waitFor((s) => s.includes("⢿  Generating..."), "the generating reply");
    await pane.keys("Escape");
    const screen = await pane.waitFor((s) => s.includes("? for shortcuts"), "the idle composer");
    const lines = rows(screen);
    const composerTop = lines.lastIndexOf("─".repeat(120), lines.length - 3);
    expect(lines.slice(composerTop - 2, composerTop)).toEqual([INTERRUPTED, ""]);
    expect((await pane.steps()).some((s) => s.status === CANCELED)).toBe(true);
  });

  it("LF (C-j) and M-Enter insert newlines; only CR submits, as one message", async () => {
    const pane = await sim();
    await pane.keys("-l", "line one");
    await pane.keys("C-j");
    await pane.keys("-l", "line two");
    await pane.keys("M-Enter");
    await pane.keys("-l", "line three");
    const drafted = await pane.waitFor((s) => composer(s).join("\n").includes("line three"), "the three-line draft");
    expect(composer(drafted)).toEqual(["> line one", "  line two", "  line three"]);
    // A draft removes `? for shortcuts` (spike-notes §13 #26).
    expect(rows(drafted).at(-1)).toMatch(/^ +Gemini · mediu$/);
    expect(userTurns(await pane.steps())).toEqual([]);
    await pane.keys("Enter");
    await until(async () => {
      const turns = userTurns(await pane.steps());
      return turns.length > 0 ? turns : undefined;
    }, "the submitted turn");
    expect(userTurns(await pane.steps())).toEqual(["line one\nline two\nline three"]);
  });
});

describe("other 1.2 screens (spike-notes §13 #26, §13 #34, §13 #35, K16)", () => {
  it("/effort opens Set Effort, a slider only, under an empty composer; Escape goes back", async () => {
    const pane = await sim();
    await pane.keys("-l", "/effort");
    await pane.waitFor((s) => s.includes("/effort") && s.includes("Set the reasoning effort"), "the slash popup with /effort");
    await pane.keys("Enter");
    const screen = await pane.waitFor((s) => s.includes("Set Effort"), "the effort slider");
    const lines = rows(screen);
    expect(lines).toContain("Keyboard: ←/→ Effort  enter Select  esc Go Back");
    expect(screen).not.toContain("Switch Model");
    expect(screen).not.toContain("? for shortcuts");
    expect(composer(screen)).toEqual([">"]);
    await pane.keys("Escape");
    await pane.waitFor((s) => !s.includes("Set Effort") && s.includes("? for shortcuts"), "the composer again");
  });

  it("? on an empty composer opens the shortcuts overlay; Escape closes it", async () => {
    const pane = await sim();
    await pane.keys("-l", "?");
    const screen = await pane.waitFor((s) => s.includes("Keyboard: ↑/↓ Navigate  ←/→ Switch View  esc Close"), "the shortcuts overlay");
    expect(screen).toContain("alt+enter, ctrl+j, shift+enter  Insert newline");
    expect(screen).not.toContain("? for shortcuts");
    expect(composer(screen)).toEqual([">"]);
    await pane.keys("Escape");
    await pane.waitFor((s) => !s.includes("esc Close") && s.includes("? for shortcuts"), "the composer again");
  });

  it("--tui-tasks 1 puts · 1 task(s) · /tasks on the idle status row", async () => {
    const pane = await sim(["--tui-tasks", "1"]);
    const status = rows(await pane.screen()).at(-1) ?? "";
    expect(status).toMatch(/^\? for shortcuts +Gemini · medium · 1 task\(s\) · \/task$/);
    expect(status).toHaveLength(119);
  });

  it("a full version (--tui-version 1.2.10) plays 1.2 and names itself in the banner", async () => {
    const pane = await startSimPane(tmux, ["--tui-version", "1.2.10", "--scenarios", scenarios]);
    expect(rows(await pane.screen())[0]).toBe("Antigravity CLI 1.2.10");
    await pane.typeTurn("Run pwd");
    await pane.waitFor(dialogOpen, "the 1.2 command dialog");
  });
});

describe("agy's files under the simulated HOME (spike-notes §16)", () => {
  it("appends brain/<id>/.system_generated/logs/transcript.jsonl during the turn and maps the cwd in cache/last_conversations.json", async () => {
    const home = mkdtempSync(join(dir, "home-"));
    const pane = await sim(["--home", home]);
    const root = join(home, ".gemini", "antigravity-cli");
    const transcript = join(root, "brain", pane.conversationId, ".system_generated", "logs", "transcript.jsonl");
    const records = (): Record<string, unknown>[] =>
      existsSync(transcript)
        ? readFileSync(transcript, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [];
    const { index } = await commandDialog(pane);
    // Mid-turn (the gate waits): the user's turn is already on disk, the waiting step is not.
    await until(() => records().some((r) => r.type === "USER_INPUT") || undefined, "the USER_INPUT record", { seen: () => JSON.stringify(records()) });
    expect(records().some((r) => r.step_index === index)).toBe(false);
    expect(records()[0]).toMatchObject({
      step_index: 0,
      source: "USER_EXPLICIT",
      type: "USER_INPUT",
      status: "DONE",
      content: "<USER_REQUEST>\nRun pwd\n</USER_REQUEST>",
    });
    expect(JSON.parse(readFileSync(join(root, "cache", "last_conversations.json"), "utf8"))).toEqual({ [ROOT]: pane.conversationId });
    await pane.keys("1");
    await until(() => records().find((r) => r.step_index === index && r.status === "DONE"), "the command's record", { seen: () => JSON.stringify(records()) });
    const command = records().find((r) => r.step_index === index);
    expect(command).toMatchObject({ source: "MODEL", type: "RUN_COMMAND", content: "pwd\n/home/sim/project\n" });
    const dispatch = records().find((r) => Array.isArray(r.tool_calls));
    expect(dispatch).toMatchObject({ type: "PLANNER_RESPONSE", tool_calls: [{ name: "run_command", args: { CommandLine: "pwd" } }] });
    const indexes = records().map((r) => r.step_index);
    expect(new Set(indexes).size).toBe(indexes.length);
  });

  it("--agy-transcript transcript_full.jsonl plays the other reported name (spike-notes §16 #1)", async () => {
    const home = mkdtempSync(join(dir, "home-"));
    const pane = await sim(["--home", home, "--agy-transcript", "transcript_full.jsonl"]);
    const logs = join(home, ".gemini", "antigravity-cli", "brain", pane.conversationId, ".system_generated", "logs");
    await pane.typeTurn("Say anything");
    await until(() => existsSync(join(logs, "transcript_full.jsonl")) || undefined, "transcript_full.jsonl");
    expect(existsSync(join(logs, "transcript.jsonl"))).toBe(false);
  });
});
