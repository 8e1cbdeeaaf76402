/**
 * The fake TUI in a real tmux pane (private socket), steered through a fake
 * port, driven with the keys a supervisor sends. Each test names the fact
 * (spike-notes §13, agy's real screen) or section it reproduces.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { FakePortCall } from "../support/fake-tui-port.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import type { TuiPending, TuiView } from "../../src/sim/tui/tui-port.js";

const ROOT = resolve(import.meta.dirname, "../..");
const ENTRY = join(ROOT, "test/support/tui-fake-entry.ts");
const POLL = { timeout: 10_000, interval: 50 };
const COLUMNS = 90;
const RULE = "─".repeat(COLUMNS);

let tmux: PrivateTmux;
let dir: string;
let sessionCount = 0;

beforeAll(() => {
  tmux = createPrivateTmux();
  dir = mkdtempSync(join(tmpdir(), "agy-tui-"));
});

afterAll(async () => {
  await tmux.kill();
  rmSync(dir, { recursive: true, force: true });
});

interface Pane {
  target: string;
  setView(patch: Partial<TuiView>): Promise<void>;
  calls(): Promise<FakePortCall[]>;
  screen(): Promise<string>;
  waitFor(predicate: (screen: string) => boolean, what: string): Promise<string>;
  keys(...keys: string[]): Promise<void>;
}

/** A fake TUI of the test's own; `flags` go to tui-fake-entry.ts (`--version`, `--digits`, `--trust`). */
async function openPane(flags: string[] = [], ready: (screen: string) => boolean = (s) => s.includes("? for shortcuts")): Promise<Pane> {
  sessionCount += 1;
  const target = `tui${sessionCount}`;
  const portFile = join(dir, `${target}.port`);
  await tmux.newSession(target, [process.execPath, "--import", "tsx", ENTRY, portFile, ...flags], { cwd: ROOT, columns: COLUMNS, rows: 40 });
  onTestFinished(() =>
    tmux.run(["kill-session", "-t", target]).then(
      () => undefined,
      () => undefined,
    ),
  );
  await tmux.waitForScreen(target, ready, "the fake TUI's first screen", 20_000);
  const base = `http://127.0.0.1:${readFileSync(portFile, "utf8")}`;
  return {
    target,
    async setView(patch) {
      const body = JSON.stringify(patch, (_key, value: unknown) => (value === undefined ? null : value));
      const res = await fetch(`${base}/view`, { method: "POST", body });
      expect(res.status).toBe(200);
    },
    async calls() {
      return (await (await fetch(`${base}/calls`)).json()) as FakePortCall[];
    },
    screen: () => tmux.capture(target),
    waitFor: (predicate, what) => tmux.waitForScreen(target, predicate, what),
    keys: (...keys) => tmux.sendKeys(target, ...keys),
  };
}

/** The screen's rows without the blank rows under a top-anchored screen. */
function rows(screen: string): string[] {
  const lines = screen.split("\n");
  while (lines.length > 0 && lines[lines.length - 1]?.trim() === "") lines.pop();
  return lines;
}

/** The lines between the last two full-width rules (agy's input box). */
function composerRegion(screen: string): string[] {
  const lines = rows(screen);
  const rules = lines.flatMap((line, i) => (line === RULE ? [i] : []));
  const [a, b] = rules.slice(-2);
  if (a === undefined || b === undefined) throw new Error(`no composer in:\n${screen}`);
  return lines.slice(a + 1, b);
}

const COMMAND: TuiPending = { kind: "permission", trajectoryId: "traj-1", stepIndex: 4, target: "rm -rf build", description: "Remove the build directory" };
const ALLOWED = { call: "answer", stepIndex: 4, answer: { kind: "permission", allow: true }, delivered: true };
const DENIED = { call: "answer", stepIndex: 4, answer: { kind: "permission", allow: false }, delivered: true };

/** Opens the command dialog and waits until it replaced the composer. */
async function openCommandDialog(pane: Pane): Promise<string> {
  await pane.setView({ running: true, transcript: [{ role: "user", text: "clean up" }], pending: COMMAND });
  return pane.waitFor((s) => s.includes("  4. No") && s.includes("Do you want to proceed?"), "the command dialog");
}

/** Waits for the port to have answered once, then returns its calls. */
async function answered(pane: Pane): Promise<FakePortCall[]> {
  await expect.poll(async () => (await pane.calls()).length, POLL).toBe(1);
  return pane.calls();
}

describe("fake TUI in a tmux pane: composer", () => {
  it("draws idle agy top-anchored: rule, bare >, rule, status row one column short with a cut label (facts 1–2)", async () => {
    const pane = await openPane();
    const screen = rows(await pane.screen());
    expect(screen.slice(-4)).toEqual([RULE, ">", RULE, expect.stringMatching(/^\? for shortcuts +Gemini · mediu$/)]);
    expect(screen.at(-1)).toHaveLength(COLUMNS - 1);
    expect(screen.length).toBeLessThan(40);
  });

  it("submits a bracketed paste on Enter and the draft leaves the composer (spike-notes §6.2 steps 5–7)", async () => {
    const pane = await openPane();
    await tmux.paste(pane.target, "first line\nsecond line\n");
    const drafted = await pane.waitFor((s) => composerRegion(s).join("\n").includes("second line"), "the pasted draft");
    expect(composerRegion(drafted).slice(0, 2)).toEqual(["> first line", "  second line"]);
    expect(await pane.calls()).toEqual([]);
    await pane.keys("Enter");
    const after = await pane.waitFor((s) => !composerRegion(s).join("\n").includes("second line"), "the draft leaving the composer");
    expect(await pane.calls()).toEqual([{ call: "submitTurn", text: "first line\nsecond line" }]);
    expect(after).toContain("⢿  Generating...");
    expect(rows(after).at(-1)).toMatch(/^esc to cancel/);
  });

  it("collapses a paste of 13+ lines to a [Pasted text #N +K lines] placeholder but submits the full text (spike-notes §6.2 step 6)", async () => {
    const pane = await openPane();
    const text = Array.from({ length: 14 }, (_, i) => `line ${i + 1}`).join("\n");
    await tmux.paste(pane.target, `${text}\n`);
    const screen = await pane.waitFor((s) => s.includes("[Pasted text #1"), "the paste placeholder");
    expect(composerRegion(screen)[0]).toBe("> [Pasted text #1 +14 lines]");
    await pane.keys("Enter");
    await pane.waitFor((s) => !s.includes("[Pasted text #1"), "the placeholder leaving the composer");
    expect(await pane.calls()).toEqual([{ call: "submitTurn", text }]);
  });

  it("clears a half-typed draft with C-a C-k (spike-notes §6.2 step 3)", async () => {
    const pane = await openPane();
    await pane.keys("-l", "half typed");
    await pane.waitFor((s) => composerRegion(s)[0] === "> half typed", "the typed draft");
    await pane.keys("C-a");
    await pane.keys("C-k");
    await pane.waitFor((s) => composerRegion(s)[0] === ">", "an empty composer");
    await pane.keys("Enter");
    // Keys are read in order: once a later key shows, the Enter has been handled.
    await pane.keys("-l", "z");
    await pane.waitFor((s) => composerRegion(s)[0] === "> z", "a key typed after the Enter");
    expect(await pane.calls()).toEqual([]);
  });

  it("shows the spinner row and `esc to cancel` while generating, and cancels on Escape (fact 5)", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, transcript: [{ role: "user", text: "go" }] });
    const screen = await pane.waitFor((s) => s.includes("esc to cancel"), "the running status row");
    expect(rows(screen).slice(-5)).toEqual(["⢿  Generating...", RULE, ">", RULE, expect.stringMatching(/^esc to cancel +Gemini · mediu$/)]);
    await pane.keys("Escape");
    await expect.poll(() => pane.calls(), POLL).toEqual([{ call: "cancel" }]);
  });

  it("cycles the modes with shift+tab, with agy's placeholder in the empty composer and the mode in the status row (fact 7)", async () => {
    const pane = await openPane();
    await pane.keys("BTab");
    let screen = await pane.waitFor((s) => s.includes("Accept-edits mode"), "the accept-edits placeholder");
    expect(composerRegion(screen)).toEqual(["> Accept-edits mode: file edits auto-approved (shift+tab to cycle)"]);
    expect(rows(screen).at(-1)).toMatch(/^\? for shortcuts +accept-edits · Gemini · medi$/);
    await pane.keys("BTab");
    screen = await pane.waitFor((s) => s.includes("Plan mode"), "the plan placeholder");
    expect(composerRegion(screen)).toEqual(["> Plan mode: research & plan only (shift+tab to cycle)"]);
    expect(rows(screen).at(-1)).toMatch(/^\? for shortcuts +plan · Gemini · medi$/);
    await pane.keys("-l", "x");
    screen = await pane.waitFor((s) => composerRegion(s)[0] === "> x", "a draft hiding the placeholder");
    await pane.keys("BSpace", "BTab");
    screen = await pane.waitFor((s) => composerRegion(s)[0] === ">", "default mode's bare composer");
    expect(rows(screen).at(-1)).toMatch(/^\? for shortcuts +Gemini · mediu$/);
  });

  it("on 1.2.1 drops `? for shortcuts` after a tool turn and draws a three-row input box (fact 6)", async () => {
    const pane = await openPane(["--version", "1.2.1"]);
    await pane.setView({
      transcript: [
        { role: "user", text: "list" },
        { role: "tool", text: "a b", call: { name: "Bash", arg: "ls" } },
        { role: "assistant", text: "Two files." },
      ],
    });
    const screen = await pane.waitFor((s) => s.includes("Two files.") && !s.includes("? for shortcuts"), "the 1.2.1 status row");
    expect(composerRegion(screen)).toEqual([">", "", ""]);
    expect(rows(screen).at(-1)).toMatch(/^ +Gemini · mediu$/);
  });
});

describe("fake TUI in a tmux pane: dialogs", () => {
  it("replaces the composer with the command dialog, pointer at column 0, `esc to cancel` under it (facts 8–9, 12)", async () => {
    const pane = await openPane();
    const screen = rows(await openCommandDialog(pane));
    expect(screen.filter((line) => line === RULE)).toHaveLength(1);
    expect(screen).toContain("Command");
    expect(screen).toContain("> 1. Yes");
    expect(screen.at(-2)).toBe("  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command");
    expect(screen.at(-1)).toMatch(/^esc to cancel +Gemini · mediu$/);
  });

  it("moves the pointer with Down/Up and confirms the pointed option with Enter (facts 12, 14)", async () => {
    const pane = await openPane();
    await openCommandDialog(pane);
    await pane.keys("Down", "Down", "Down");
    await pane.waitFor((s) => s.includes("> 4. No") && s.includes("  1. Yes"), "the pointer on 4. No");
    await pane.keys("Up");
    await pane.waitFor((s) => s.includes("> 3. Yes"), "the pointer on 3");
    await pane.keys("Down");
    await pane.waitFor((s) => s.includes("> 4. No"), "the pointer back on 4. No");
    await pane.keys("Enter");
    expect(await answered(pane)).toEqual([DENIED]);
  });

  it("ignores digits by default: `4 Enter` approves the highlighted `1. Yes` (fact 14)", async () => {
    const pane = await openPane();
    await openCommandDialog(pane);
    await pane.keys("4", "Enter");
    expect(await answered(pane)).toEqual([ALLOWED]);
  });

  it("takes `4 Enter` as No with --digits accept (agy 1.0.10, spike-notes §5.6)", async () => {
    const pane = await openPane(["--digits", "accept"]);
    await openCommandDialog(pane);
    await pane.keys("4", "Enter");
    expect(await answered(pane)).toEqual([DENIED]);
  });

  it("confirms the pointed option when text + Enter is typed into a dialog (fact 15)", async () => {
    const pane = await openPane();
    await openCommandDialog(pane);
    await tmux.paste(pane.target, "No, do not delete anything\n");
    await pane.keys("Enter");
    expect(await answered(pane)).toEqual([ALLOWED]);
  });

  it("declines on Escape; the transcript then shows `⎿  User declined the tool call` and the composer returns (fact 22)", async () => {
    const pane = await openPane();
    await openCommandDialog(pane);
    await pane.keys("Escape");
    expect(await answered(pane)).toEqual([DENIED]);
    await pane.setView({ running: false });
    const screen = await pane.waitFor((s) => s.includes("? for shortcuts"), "the idle composer");
    expect(screen).toContain("Command\n  ⎿  User declined the tool call");
    expect(composerRegion(screen)).toEqual([">"]);
  });

  it("keeps its dialog open after an RPC answer until Escape closes it, shown as declined (spike-notes §5.4)", async () => {
    const pane = await openPane();
    await openCommandDialog(pane);
    await pane.setView({
      pending: undefined,
      transcript: [
        { role: "user", text: "clean up" },
        { role: "tool", text: "removed", call: { name: "Bash", arg: "rm -rf build" } },
      ],
    });
    const stale = await pane.waitFor((s) => s.includes("⎿  removed"), "the RPC-answered step");
    expect(stale).toContain("  4. No");
    await pane.keys("Escape");
    const closed = await pane.waitFor((s) => !s.includes("  4. No"), "the stale dialog closing");
    expect(closed).toContain("User declined the tool call");
    expect(await pane.calls()).toEqual([{ ...DENIED, delivered: false }]);
  });

  it("answers a multi-select question with arrows and space (the simulator's questions)", async () => {
    const pane = await openPane();
    await pane.setView({
      running: true,
      pending: {
        kind: "question",
        trajectoryId: "traj-1",
        stepIndex: 7,
        questions: [
          {
            question: "Which colours?",
            multiSelect: true,
            options: [
              { id: "1", text: "red" },
              { id: "2", text: "green" },
              { id: "3", text: "blue" },
            ],
          },
        ],
      },
    });
    await pane.waitFor((s) => s.includes("Which colours?") && s.includes("  3. [ ] blue"), "the question dialog");
    await pane.keys("Down", "Space", "Down", "Space");
    await pane.waitFor((s) => s.includes("  2. [x] green") && s.includes("> 3. [x] blue"), "the ticked options");
    await pane.keys("Enter");
    expect(await answered(pane)).toEqual([{ call: "answer", stepIndex: 7, answer: { kind: "question", selectedOptionIds: ["2", "3"] }, delivered: true }]);
  });
});

describe("fake TUI in a tmux pane: screens that hold the keyboard", () => {
  it("starts on the trust screen with --trust: no composer, arrows move the pointer, Enter on Yes opens the composer (fact 16)", async () => {
    const pane = await openPane(["--trust", "~/proj"], (s) => s.includes("Accessing workspace:"));
    const screen = rows(await pane.screen());
    expect(screen.slice(0, 3)).toEqual(["Accessing workspace:", "", "~/proj"]);
    expect(screen).toContain("> Yes, I trust this folder");
    expect(screen.at(-2)).toBe("  ↑/↓ Navigate · enter Confirm");
    expect(screen).not.toContain(RULE);
    await pane.keys("Down");
    await pane.waitFor((s) => s.includes("> No, exit"), "the pointer on No, exit");
    await pane.keys("Up");
    await pane.waitFor((s) => s.includes("> Yes, I trust"), "the pointer back on Yes");
    await pane.keys("Enter");
    const idle = await pane.waitFor((s) => s.includes("? for shortcuts"), "the composer after trusting");
    expect(composerRegion(idle)).toEqual([">"]);
  });

  it("runs the HIGHLIGHTED slash command on Enter, not the typed text (fact 20)", async () => {
    const pane = await openPane();
    await pane.keys("-l", "/");
    const popup = await pane.waitFor((s) => s.includes("enter Select · tab Complete"), "the slash popup");
    expect(rows(popup)).toContain("> /clear                Start a new conversation");
    expect(rows(popup).at(-1)).toMatch(/^esc to cancel/);
    await pane.keys("Down", "Down");
    await pane.waitFor((s) => s.includes("> /model"), "the pointer on /model");
    await pane.keys("Enter");
    const picker = await pane.waitFor((s) => s.includes("Switch Model"), "the model picker");
    expect(rows(picker)).toContain("Keyboard: ↑/↓ Navigate  ←/→ Effort  enter Select  esc Go Back");
    await pane.keys("Escape");
    await pane.waitFor((s) => s.includes("⎿  Exited /model command"), "the picker closing");
    expect(await pane.calls()).toEqual([]);
  });

  it("runs /status's highlighted neighbour when the pointer moved: the typed command is not what runs (fact 20)", async () => {
    const pane = await openPane();
    await pane.keys("-l", "/status");
    await pane.waitFor((s) => s.includes("> /status ") && s.includes("  /statusline"), "the filtered popup");
    await pane.keys("Down", "Enter");
    await pane.waitFor((s) => s.includes("> /statusline\n  ⎿  /statusline"), "the highlighted command running");
    expect(await pane.calls()).toEqual([]);
  });

  it("turns a typed /clear into a clear of the conversation (spike-notes §4.10)", async () => {
    const pane = await openPane();
    await pane.keys("-l", "/clear");
    await pane.keys("Enter");
    await expect.poll(() => pane.calls(), POLL).toEqual([{ call: "clear" }]);
  });
});
