/**
 * The exact bytes a program in the pane receives when the driver types a
 * turn: one bracketed paste (ESC[200~ … ESC[201~), then Enter (CR) from a
 * separate send-keys. The program is a raw-mode byte logger drawing an
 * agy-like composer in a real tmux pane on a private server (spike-notes
 * §6.1, §6.2 step 5).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTmuxDriver, type TmuxDriver } from "../../src/tmux/index.js";
import { createTmuxWorld, type LoggerPane, type TmuxWorld } from "./support/tmux-world.js";

const START = "\x1b[200~";
const END = "\x1b[201~";

let world: TmuxWorld;
let driver: TmuxDriver;
let pane: LoggerPane;

beforeEach(async () => {
  world = await createTmuxWorld();
  driver = createTmuxDriver({ socket: { name: world.socketName } });
  pane = await world.startLogger("logger");
});

afterEach(async () => {
  await world.dispose();
});

/** Delivers `text` and returns what the logger received once Enter followed the paste. */
async function typed(text: string): Promise<string> {
  const result = await driver.deliverTurn(pane.paneId, text);
  // The logger echoes the paste in its composer and clears it on Enter, as agy's does.
  expect(result).toEqual({ result: "delivered", reason: expect.stringContaining("the draft left the composer") });
  const bytes = await pane.waitForBytes((b) => b.toString("utf8").endsWith(`${END}\r`), "the paste end followed by Enter");
  return bytes.toString("utf8");
}

describe("bytes typed into a raw-mode program", () => {
  it.each([
    ["ordinary text", "Please refactor the parser.", "Please refactor the parser."],
    ["text starting with -", "-n --help -- is not an option", "-n --help -- is not an option"],
    ["a trailing ;", "run the tests;", "run the tests;"],
    ["unicode and emoji", "naïve café — 日本語 ∑ 🙂👍🏽", "naïve café — 日本語 ∑ 🙂👍🏽"],
    ["tabs", "col1\tcol2\t\tcol4", "col1\tcol2\t\tcol4"],
    ["CRLF and CR normalised to LF", "one\r\ntwo\rthree", "one\ntwo\nthree"],
    ["ESC and BEL stripped", "red \x1b[31mtext\x1b[0m bell\x07 end\x1b[201~ still pasted", "red [31mtext[0m bell end[201~ still pasted"],
    ["a trailing backslash followed by a newline so Enter still submits", "path C:\\", "path C:\\\n"],
  ])("types %s byte-exactly as one paste, then Enter", async (_name, text, pasted) => {
    expect(await typed(text)).toBe(`${START}${pasted}${END}\r`);
  });

  it("types multi-line text as one paste with LF inside and exactly one Enter after it", async () => {
    const text = "first line\nsecond line\n\nfourth line after a blank";
    const got = await typed(text);
    expect(got).toBe(`${START}${text}${END}\r`);
    expect(got.split("\r")).toHaveLength(2);
  });

  it("types quotes, backslashes, $(…) and backticks literally and executes nothing", async () => {
    const marker = join(world.dir, "dollar-paren");
    const tick = join(world.dir, "backtick");
    const text = `He said "hi" and 'bye' \\n \\\\ $(touch ${marker}) \`touch ${tick}\` $HOME ; & | > < #{pane_id} %1`;
    expect(await typed(text)).toBe(`${START}${text}${END}\r`);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(tick)).toBe(false);
  });

  it("sends Enter as its own key after the paste-end marker, never inside the paste", async () => {
    const got = await typed("line a\nline b");
    const end = got.indexOf(END);
    expect(got.slice(0, end)).not.toContain("\r");
    expect(got.slice(end + END.length)).toBe("\r");
  });
});

describe("prompt actions where no dialog is drawn", () => {
  it("send no byte at all: an Escape while agy runs would cancel its turn, an Enter would submit a draft", async () => {
    expect(await driver.closePrompt(pane.paneId, { settleTimeoutMs: 200 })).toMatchObject({ result: "none", keys: [] });
    expect(await driver.answerPrompt(pane.paneId, { kind: "approve" }, { settleTimeoutMs: 200 })).toMatchObject({ result: "failed", keys: [] });
    expect(await driver.answerPrompt(pane.paneId, { kind: "decline" }, { settleTimeoutMs: 200 })).toMatchObject({ result: "failed", keys: [] });
    // The next thing the program receives is a turn's paste: nothing came before it.
    expect(await typed("after the prompt actions")).toBe(`${START}after the prompt actions${END}\r`);
  });
});
