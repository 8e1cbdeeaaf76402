/**
 * The fake TUI in a real tmux pane (private socket), steered through a fake
 * port. Each test names the reference section whose screen behaviour it
 * reproduces.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { FakePortCall } from "../support/fake-tui-port.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import type { TuiView } from "../../src/sim/tui/tui-port.js";

const ROOT = resolve(import.meta.dirname, "../..");
const ENTRY = join(ROOT, "test/support/tui-fake-entry.ts");
const POLL = { timeout: 10_000, interval: 50 };

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
}

async function openPane(): Promise<Pane> {
  sessionCount += 1;
  const target = `tui${sessionCount}`;
  const portFile = join(dir, `${target}.port`);
  await tmux.newSession(target, [process.execPath, "--import", "tsx", ENTRY, portFile], { cwd: ROOT, columns: 90, rows: 30 });
  await tmux.waitForScreen(target, (s) => s.includes("? for shortcuts"), "the idle footer", 20_000);
  const control = readFileSync(portFile, "utf8");
  const base = `http://127.0.0.1:${control}`;
  const pane: Pane = {
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
  };
  return pane;
}

/** The lines between the last two separator rules, as a driver reads them (spike-notes §6.2 step 4). */
function composerRegion(screen: string): string[] {
  const lines = screen.split("\n");
  const rules = lines.flatMap((line, i) => (/^[─\s]*$/.test(line) && (line.match(/─/g)?.length ?? 0) >= 8 ? [i] : []));
  const [a, b] = rules.slice(-2);
  if (a === undefined || b === undefined) throw new Error(`no composer in:\n${screen}`);
  return lines.slice(a + 1, b);
}

const PERMISSION = {
  kind: "permission" as const,
  trajectoryId: "traj-1",
  stepIndex: 4,
  target: "rm -rf build",
  description: "Remove the build directory",
};

describe("fake TUI in a tmux pane", () => {
  let pane: Pane;
  beforeEach(async () => {
    pane = await openPane();
  });
  afterEach(async () => {
    await tmux.run(["kill-session", "-t", pane.target]).catch(() => undefined);
  });

  it("shows the composer between two rules with the prompt glyph and the idle footer (spike-notes §6.2)", async () => {
    const screen = await pane.screen();
    expect(composerRegion(screen)).toEqual([">"]);
    expect(screen).toContain("? for shortcuts");
    expect(screen).not.toContain("esc to cancel");
  });

  it("submits a bracketed paste on Enter and the draft leaves the composer (spike-notes §6.2 steps 5–7)", async () => {
    await tmux.paste(pane.target, "first line\nsecond line\n");
    const drafted = await pane.waitFor((s) => composerRegion(s).join("\n").includes("second line"), "the pasted draft");
    expect(composerRegion(drafted).slice(0, 2)).toEqual(["> first line", "  second line"]);
    expect(await pane.calls()).toEqual([]);
    await tmux.sendKeys(pane.target, "Enter");
    const after = await pane.waitFor((s) => !composerRegion(s).join("\n").includes("second line"), "the draft leaving the composer");
    expect(await pane.calls()).toEqual([{ call: "submitTurn", text: "first line\nsecond line" }]);
    expect(after).toContain("esc to cancel");
  });

  it("collapses a paste of 13+ lines to a [Pasted text #N +K lines] placeholder but submits the full text (spike-notes §6.2 step 6)", async () => {
    const text = Array.from({ length: 14 }, (_, i) => `line ${i + 1}`).join("\n");
    await tmux.paste(pane.target, `${text}\n`);
    const screen = await pane.waitFor((s) => s.includes("[Pasted text #1"), "the paste placeholder");
    expect(composerRegion(screen)[0]).toBe("> [Pasted text #1 +14 lines]");
    await tmux.sendKeys(pane.target, "Enter");
    await pane.waitFor((s) => !s.includes("[Pasted text #1"), "the placeholder leaving the composer");
    expect(await pane.calls()).toEqual([{ call: "submitTurn", text }]);
  });

  it("clears a half-typed draft with C-a C-k (spike-notes §6.2 step 3)", async () => {
    await tmux.sendKeys(pane.target, "-l", "half typed");
    await pane.waitFor((s) => composerRegion(s)[0] === "> half typed", "the typed draft");
    await tmux.sendKeys(pane.target, "C-a");
    await tmux.sendKeys(pane.target, "C-k");
    await pane.waitFor((s) => composerRegion(s)[0] === ">", "an empty composer");
    await tmux.sendKeys(pane.target, "Enter");
    // Keys are read in order: once a later key shows, the Enter has been handled.
    await tmux.sendKeys(pane.target, "-l", "z");
    await pane.waitFor((s) => composerRegion(s)[0] === "> z", "a key typed after the Enter");
    expect(await pane.calls()).toEqual([]);
  });

  it("shows the running footer and cancels the turn on Escape (spike-notes §6.2 step 2)", async () => {
    await pane.setView({ running: true, transcript: [{ role: "user", text: "go" }] });
    await pane.waitFor((s) => s.includes("esc to cancel"), "the running footer");
    await tmux.sendKeys(pane.target, "Escape");
    await expect.poll(() => pane.calls(), POLL).toEqual([{ call: "cancel" }]);
  });

  it("turns a typed /clear into a clear of the conversation (spike-notes §4.10)", async () => {
    await tmux.sendKeys(pane.target, "-l", "/clear");
    await tmux.sendKeys(pane.target, "Enter");
    await expect.poll(() => pane.calls(), POLL).toEqual([{ call: "clear" }]);
  });

  it("answers a permission prompt with 1 Enter through the port (spike-notes §5.6)", async () => {
    await pane.setView({ running: true, pending: PERMISSION });
    const screen = await pane.waitFor((s) => s.includes("4. No"), "the numbered permission prompt");
    expect(screen).toContain("rm -rf build");
    expect(screen).toMatch(/1\. Yes\n/);
    await tmux.sendKeys(pane.target, "1", "Enter");
    await pane.waitFor((s) => !s.includes("4. No"), "the prompt closing");
    expect(await pane.calls()).toEqual([
      { call: "answer", stepIndex: 4, answer: { kind: "permission", allow: true }, delivered: true },
    ]);
    expect(await pane.screen()).not.toContain("User declined the tool call");
  });

  it("keeps its own prompt open after an RPC answer until 1 Enter closes it as declined (spike-notes §5.4)", async () => {
    await pane.setView({ running: true, pending: PERMISSION });
    await pane.waitFor((s) => s.includes("4. No"), "the permission prompt");
    await pane.setView({ pending: undefined, transcript: [{ role: "tool", text: "ran rm -rf build" }] });
    const stale = await pane.waitFor((s) => s.includes("ran rm -rf build"), "the RPC-answered step");
    expect(stale).toContain("4. No");
    await tmux.sendKeys(pane.target, "1", "Enter");
    const closed = await pane.waitFor((s) => !s.includes("4. No"), "the stale prompt closing");
    expect(closed).toContain("User declined the tool call");
    expect(await pane.calls()).toEqual([
      { call: "answer", stepIndex: 4, answer: { kind: "permission", allow: true }, delivered: false },
    ]);
  });

  it("closes a stale prompt on Escape (spike-notes §5.4)", async () => {
    await pane.setView({ running: true, pending: PERMISSION });
    await pane.waitFor((s) => s.includes("4. No"), "the permission prompt");
    await pane.setView({ pending: undefined });
    await tmux.sendKeys(pane.target, "Escape");
    const closed = await pane.waitFor((s) => !s.includes("4. No"), "the stale prompt closing");
    expect(closed).toContain("User declined the tool call");
  });

  it("toggles multi-select options with digits and confirms with Enter (spike-notes §5.6)", async () => {
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
    await pane.waitFor((s) => s.includes("Which colours?") && s.includes("3. [ ] blue"), "the question prompt");
    await tmux.sendKeys(pane.target, "3", "2");
    await pane.waitFor((s) => s.includes("2. [x] green") && s.includes("3. [x] blue"), "the ticked options");
    await tmux.sendKeys(pane.target, "Enter");
    await pane.waitFor((s) => !s.includes("Which colours?"), "the question closing");
    expect(await pane.calls()).toEqual([
      { call: "answer", stepIndex: 7, answer: { kind: "question", selectedOptionIds: ["2", "3"] }, delivered: true },
    ]);
  });
});
