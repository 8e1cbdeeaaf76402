/**
 * `sim --replay DIR` of someone else's capture: its screens are shown, never
 * obeyed (OSC 52 clipboard writes, OSC 0 titles, OSC 8 links, C1 CSI, BEL
 * reach the terminal as visible text), and the directory is not trusted —
 * a symbolic link (to a file or a folder outside it) is refused, as are
 * oversized files and times no timer can wait for, each with a sentence
 * that says what to do. Each test builds its own capture by hand.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { loadReplayCapture, REPLAY_LIMITS } from "../../src/sim/replay/capture-loader.js";
import { runMain } from "../support/cli-io.js";

const ID = "00000000-0000-4000-8000-000000000001";
/** The replay screen's own clear-screen, the one sequence it writes raw. */
const CLEAR = "\x1b[2J\x1b[3J\x1b[H";

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "agyb-replay-safety-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A minimal capture in `dir`: meta.json, one snapshot, and `screen` as its one screen. */
function writeCapture(dir: string, screen: string): void {
  for (const sub of ["steps", "stream", "summaries", "screens"]) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(
    join(dir, "meta.json"),
    JSON.stringify({ agyVersion: null, platform: "test", capturedAt: new Date(0).toISOString(), agyBridgeVersion: "test", listeners: [], conversationId: ID }),
  );
  writeFileSync(join(dir, "steps", "0001-00000000.json"), JSON.stringify({ steps: [] }));
  writeFileSync(join(dir, "answers.ndjson"), "");
  writeFileSync(join(dir, "screens", "00000001-ready.txt"), screen);
}

const HOSTILE = [
  "\x1b]52;c;cm0gLXJmIH4K\x07clipboard",
  "\x1b]0;owned title\x07title",
  "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\",
  "\x9b31mC1 CSI red\x9b0m",
  "\x1b[2Jcleared \x08\x08 back\rover",
  "\u202emirrored",
].join("\n");

describe("sim --replay of someone else's capture", () => {
  it("shows every control sequence in its screens as visible text, writing none raw but its own clear-screen", async () => {
    const dir = scratch();
    writeCapture(dir, HOSTILE);
    const result = await runMain(["sim", "--replay", dir]);
    expect(result.code, result.stderr).toBe(0);
    const own = result.stdout.split(CLEAR).join("");
    expect(own.replace(/\r\n/g, "\n"), "a control character reached the terminal raw").not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/u);
    expect(own).toContain("\\x1b]52;c;cm0gLXJmIH4K\\x07clipboard");
    expect(own).toContain("\\x1b]0;owned title\\x07title");
    expect(own).toContain("\\x9b31mC1 CSI red");
    expect(own).toContain("\\u202emirrored");
    expect(result.stdout.startsWith(CLEAR)).toBe(true);
  });

  it("refuses a screen that is a symbolic link to a file outside the capture, saying why", async () => {
    const dir = scratch();
    writeCapture(dir, "ok\n");
    const outside = join(scratch(), "secret.txt");
    writeFileSync(outside, "private key material\n");
    symlinkSync(outside, join(dir, "screens", "00000002-ready.txt"));
    const result = await runMain(["sim", "--replay", dir]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/screens\/00000002-ready\.txt is a symbolic link/);
    expect(result.stdout + result.stderr).not.toContain("private key material");
  });

  it("refuses a folder of the capture that is a symbolic link, and a step file linked elsewhere", () => {
    const dir = scratch();
    writeCapture(dir, "ok\n");
    const elsewhere = scratch();
    writeFileSync(join(elsewhere, "00000005-ready.txt"), "from elsewhere\n");
    rmSync(join(dir, "screens"), { recursive: true });
    symlinkSync(elsewhere, join(dir, "screens"));
    expect(() => loadReplayCapture(dir)).toThrow(/screens is a symbolic link; .*refuses links/);

    const other = scratch();
    writeCapture(other, "ok\n");
    const passwd = join(scratch(), "0001-00000000.json");
    writeFileSync(passwd, JSON.stringify({ steps: [] }));
    symlinkSync(passwd, join(other, "steps", "0002-00000010.json"));
    expect(() => loadReplayCapture(other)).toThrow(/steps\/0002-00000010\.json is a symbolic link/);
  });

  it("replays a capture reached through a symbolic link to its directory: only what is inside it is checked", () => {
    const dir = scratch();
    writeCapture(dir, "ok\n");
    const link = join(scratch(), "link");
    symlinkSync(dir, link);
    expect(loadReplayCapture(link)).toMatchObject({ conversationId: ID, screens: [{ t: 1, state: "ready", text: "ok\n" }] });
  });

  it("refuses files larger than its limits and times no timer can wait for, naming the limit", () => {
    const dir = scratch();
    writeCapture(dir, "x".repeat(2048));
    expect(() => loadReplayCapture(dir, { ...REPLAY_LIMITS, screenBytes: 1024 })).toThrow(/screens\/00000001-ready\.txt is 2048 bytes, more than the 1024/);
    expect(() => loadReplayCapture(dir, { ...REPLAY_LIMITS, totalBytes: 100 })).toThrow(/add up to more than the 100 bytes/);
    expect(() => loadReplayCapture(dir, { ...REPLAY_LIMITS, filesPerFolder: 0 })).toThrow(/holds 1 files, more than the 0/);

    const late = scratch();
    writeCapture(late, "ok\n");
    writeFileSync(join(late, "screens", "99999999999-busy.txt"), "late\n");
    expect(() => loadReplayCapture(late)).toThrow(/99999999999-busy\.txt is timed 99999999999 ms after the start, later than a replay can wait/);
  });
});
