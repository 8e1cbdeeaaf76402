/**
 * The agy 1.2 file dialogs and key hand-over in a real tmux pane (private
 * socket), the TUI steered through a fake port (test/support/tui-fake-entry.ts):
 * `Pending edit`, `File access`, `Create file` outside the workspace
 * (spike-notes §13 #32, K8), Escape per dialog (spike-notes K5, K6), and a digit then
 * Enter where the Enter reaches the NEXT dialog (spike-notes K1). Also the parsing
 * and help of the new `sim` flags.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { FakePortCall } from "../support/fake-tui-port.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";
import { parseSimArgs } from "../../src/cli/sim-command.js";
import { resolveTuiVersion } from "../../src/sim/tui/tui-options.js";
import type { TuiPending, TuiView } from "../../src/sim/tui/tui-port.js";
import { runMain } from "../support/cli-io.js";
import { ROOT, rows } from "./support/sim-pane.js";

const ENTRY = join(ROOT, "test/support/tui-fake-entry.ts");
const COLUMNS = 100;

let tmux: PrivateTmux;
let dir: string;
let count = 0;

beforeAll(() => {
  tmux = createPrivateTmux();
  dir = mkdtempSync(join(tmpdir(), "agy-tui12d-"));
});

afterAll(async () => {
  await tmux.kill();
  rmSync(dir, { recursive: true, force: true });
});

interface Pane {
  setView(patch: Partial<TuiView>): Promise<void>;
  calls(): Promise<FakePortCall[]>;
  waitFor(predicate: (screen: string) => boolean, what: string): Promise<string>;
  keys(...keys: string[]): Promise<void>;
}

async function openPane(flags: string[] = []): Promise<Pane> {
  count += 1;
  const target = `d12-${count}`;
  const portFile = join(dir, `${target}.port`);
  await tmux.newSession(target, [process.execPath, "--import", "tsx", ENTRY, portFile, "--version", "1.2", ...flags], {
    cwd: ROOT,
    columns: COLUMNS,
    rows: 40,
  });
  onTestFinished(() =>
    tmux.run(["kill-session", "-t", target]).then(
      () => undefined,
      () => undefined,
    ),
  );
  await tmux.waitForScreen(target, (s) => s.includes("? for shortcuts"), "the fake TUI", 20_000);
  const base = `http://127.0.0.1:${readFileSync(portFile, "utf8")}`;
  return {
    async setView(patch) {
      const res = await fetch(`${base}/view`, { method: "POST", body: JSON.stringify(patch, (_k, v: unknown) => (v === undefined ? null : v)) });
      expect(res.status).toBe(200);
    },
    calls: async () => (await (await fetch(`${base}/calls`)).json()) as FakePortCall[],
    waitFor: (predicate, what) => tmux.waitForScreen(target, predicate, what),
    keys: (...keys) => tmux.sendKeys(target, ...keys),
  };
}

const base = { kind: "permission", trajectoryId: "t-1", description: "" } as const;
const EDIT: TuiPending = { ...base, stepIndex: 7, target: "/home/sim/project/notes.md", action: "edit-file", removed: ["old line"], preview: ["new line"] };
const ACCESS: TuiPending = { ...base, stepIndex: 8, target: "/home/sim/.bashrc", action: "read-file", outsideWorkspace: true };
const CREATE: TuiPending = { ...base, stepIndex: 9, target: "/tmp/plan.txt", action: "create-file", preview: ["ok"], outsideWorkspace: true };
const COMMAND_A: TuiPending = { ...base, stepIndex: 3, target: "make a" };
const COMMAND_B: TuiPending = { ...base, stepIndex: 5, target: "make b" };

async function answers(pane: Pane, n: number): Promise<FakePortCall[]> {
  let calls: FakePortCall[] = [];
  return until(
    async () => {
      calls = await pane.calls();
      return calls.length >= n ? calls : undefined;
    },
    `${n} port call(s)`,
    { seen: () => JSON.stringify(calls) },
  );
}

describe("1.2 file dialogs (spike-notes §13 #32, K8)", () => {
  it("Pending edit: its diff, hint and two options; Escape does nothing (spike-notes K6), 2 rejects at once", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: EDIT });
    const screen = await pane.waitFor((s) => s.includes("Accept this file edit?"), "the Pending edit dialog");
    const lines = rows(screen);
    const at = lines.indexOf("Pending edit");
    expect(lines.slice(at, at + 14)).toEqual([
      "Pending edit",
      "─".repeat(COLUMNS),
      "",
      "/home/sim/project/notes.md  +1 -1",
      "   1 -  old line",
      "   1 +  new line",
      "",
      "  shift+tab to auto-approve file edits",
      "Accept this file edit?",
      "> 1. Yes, accept this change",
      "  2. No, reject this change",
      "",
      "  ↑/↓ Navigate · tab Amend · f full diff",
      expect.stringMatching(/^esc to cancel/),
    ]);
    await pane.keys("Escape");
    await pane.keys("Down");
    await pane.waitFor((s) => s.includes("> 2. No, reject this change"), "the pointer on option 2 (the dialog still open after Escape)");
    expect(await pane.calls()).toEqual([]);
    await pane.keys("2");
    expect(await answers(pane, 1)).toEqual([{ call: "answer", stepIndex: 7, answer: { kind: "permission", allow: false }, delivered: true }]);
  });

  it("File access outside the workspace: Read:, Reason:, three options, footer ↑/↓ Navigate only; 3 denies at once", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: ACCESS });
    const screen = await pane.waitFor((s) => s.includes("Allow access to this file?"), "the File access dialog");
    const lines = rows(screen);
    const at = lines.indexOf("File access");
    expect(lines.slice(at, at + 12)).toEqual([
      "File access",
      "─".repeat(COLUMNS),
      "",
      "Read: /home/sim/.bashrc",
      "Reason: outside workspace",
      "",
      "Allow access to this file?",
      "> 1. Yes, allow access",
      "  2. Yes, and always allow non-workspace access",
      "  3. No, deny access",
      "",
      "  ↑/↓ Navigate",
    ]);
    await pane.keys("3");
    expect(await answers(pane, 1)).toEqual([{ call: "answer", stepIndex: 8, answer: { kind: "permission", allow: false }, delivered: true }]);
  });

  it("Create file outside the workspace: three options; Escape interrupts the turn instead of declining (spike-notes K5)", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: CREATE });
    const screen = await pane.waitFor((s) => s.includes("Allow creation of this file?"), "the Create file dialog");
    const lines = rows(screen);
    const at = lines.indexOf("Allow creation of this file?");
    expect(lines.slice(at - 3, at + 4)).toEqual([
      "   1 +  ok",
      "Reason: outside workspace",
      "",
      "Allow creation of this file?",
      "> 1. Yes, allow creation",
      "  2. Yes, and always allow non-workspace access",
      "  3. No, deny creation",
    ]);
    await pane.keys("Escape");
    expect(await answers(pane, 1)).toEqual([{ call: "interruptTurn", stopped: true }]);
  });
});

describe("Ctrl-C at a 1.2 dialog (spike-notes K16, K17)", () => {
  it("is the dialog's Escape: at a command approval it interrupts the turn, and the TUI keeps running", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: COMMAND_A });
    await pane.waitFor((s) => s.includes("4. No, cancel"), "the dialog");
    await pane.keys("C-c");
    expect(await answers(pane, 1)).toEqual([{ call: "interruptTurn", stopped: true }]);
    await pane.waitFor((s) => s.includes("? for shortcuts") && !s.includes("4. No, cancel"), "the composer after the interrupt");
  });
});

describe("Escape in the amend field (spike-notes K4, K5)", () => {
  it("still interrupts the turn", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: COMMAND_A });
    await pane.waitFor((s) => s.includes("4. No, cancel"), "the dialog");
    await pane.keys("Tab");
    await pane.waitFor((s) => s.includes("enter Submit"), "the amend field");
    await pane.keys("Escape");
    expect(await answers(pane, 1)).toEqual([{ call: "interruptTurn", stopped: true }]);
  });
});

describe("a digit then Enter (spike-notes K1)", () => {
  it("the digit answers the first dialog; the Enter that follows confirms the NEXT dialog's pointed option", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: COMMAND_A });
    await pane.waitFor((s) => s.includes("make a") && s.includes("4. No, cancel"), "the first dialog");
    await pane.keys("4");
    await answers(pane, 1);
    await pane.setView({ pending: COMMAND_B });
    await pane.waitFor((s) => s.includes("make b") && s.includes("4. No, cancel"), "the second dialog");
    await pane.keys("Enter");
    expect(await answers(pane, 2)).toEqual([
      { call: "answer", stepIndex: 3, answer: { kind: "permission", allow: false }, delivered: true },
      { call: "answer", stepIndex: 5, answer: { kind: "permission", allow: true }, delivered: true },
    ]);
  });

  it("a digit typed with text in one chunk: the digit answers, the rest lands in the composer", async () => {
    const pane = await openPane();
    await pane.setView({ running: true, pending: COMMAND_A });
    await pane.waitFor((s) => s.includes("4. No, cancel"), "the dialog");
    await pane.keys("-l", "1 then more");
    await pane.waitFor((s) => s.includes("> then more") || s.includes(">  then more"), "the rest of the text in the composer");
    expect((await pane.calls())[0]).toEqual({ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: true }, delivered: true });
  });
});

describe("sim flags for agy 1.2", () => {
  it("--help lists the new flags and the headless line's agyVersion", async () => {
    const run = await runMain(["sim", "--help"]);
    for (const flag of ["--tui-stale-dialog", "--tui-command-options", "--tui-tasks", "--home", "--agy-files", "--agy-transcript", '"agyVersion"', "1.2.10"])
      expect(run.stdout).toContain(flag);
  });

  it("accepts 1.2 and full versions, and refuses the rest with a sentence", () => {
    expect(resolveTuiVersion("1.2")).toEqual({ version: "1.2" });
    expect(resolveTuiVersion("1.2.1")).toEqual({ version: "1.2.1" });
    expect(resolveTuiVersion("1.2.17")).toEqual({ version: "1.2", full: "1.2.17" });
    expect(resolveTuiVersion("1.1.27")).toEqual({ version: "1.1", full: "1.1.27" });
    expect(resolveTuiVersion("1.3.1")).toBeUndefined();
    expect(
      parseSimArgs(["--tui-version", "1.2.10", "--tui-stale-dialog", "close", "--tui-command-options", "2", "--tui-tasks", "3", "--home", "/tmp/h"]),
    ).toMatchObject({
      tuiVersion: "1.2",
      tuiFullVersion: "1.2.10",
      tuiStaleDialog: "close",
      tuiCommandOptions: 2,
      tuiTasks: 3,
      home: "/tmp/h",
    });
    expect(() => parseSimArgs(["--tui-version", "2.0"])).toThrow(/--tui-version wants one of 1\.0, 1\.1, 1\.2\.1, 1\.2/);
    expect(() => parseSimArgs(["--tui-stale-dialog", "maybe"])).toThrow(/--tui-stale-dialog wants one of close, stay/);
    expect(() => parseSimArgs(["--tui-command-options", "3"])).toThrow(/wants 4 or 2/);
    expect(() => parseSimArgs(["--home", "relative/dir"])).toThrow(/absolute/);
    expect(() => parseSimArgs(["--home", "/tmp/h", "--agy-files"])).toThrow(/one place/);
  });
});
