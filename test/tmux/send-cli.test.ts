/**
 * `agy-bridge send` end to end into real tmux panes: the text from argv or
 * stdin, the result printed, the exit code honest about it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";
import { createTmuxWorld, type TmuxWorld } from "./support/tmux-world.js";

let world: TmuxWorld;

beforeEach(async () => {
  world = await createTmuxWorld();
});

afterEach(async () => {
  await world.dispose();
});

describe("agy-bridge send", () => {
  it("types 100 KB from stdin as one paste and one Enter, byte-exactly", async () => {
    const logger = await world.startLogger("big");
    const line = "0123456789 abcdefghij ABCDEFGHIJ ümlaut 🙂 $(echo no) `no` \"q\" 'q';\t\\\n";
    const text = `${line.repeat(Math.ceil(100_000 / Buffer.byteLength(line)))}the end`;
    expect(Buffer.byteLength(text)).toBeGreaterThanOrEqual(100_000);
    const cli = await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "--allow-unverified", "--json", "-"], text);
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ result: "delivered", reason: expect.stringContaining("the draft left the composer") });
    const got = await logger.waitForBytes((b) => b.toString("utf8").endsWith("\x1b[201~\r"), "the whole paste and Enter");
    const expected = `\x1b[200~${text}\x1b[201~\r`;
    const received = got.toString("utf8");
    // Compared by hand: a 100 KB diff is unreadable; the first difference is what matters.
    let firstDifference = -1;
    for (let i = 0; i < Math.max(received.length, expected.length); i++) {
      if (received[i] !== expected[i]) {
        firstDifference = i;
        break;
      }
    }
    expect({ length: received.length, firstDifference }).toEqual({ length: expected.length, firstDifference: -1 });
  });

  it("joins several TEXT words with spaces and treats words after -- as text, not options", async () => {
    const logger = await world.startLogger("words");
    const cli = await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "--allow-unverified", "--", "--force", "-x", "done;"]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^delivered: /);
    const got = await logger.waitForBytes((b) => b.includes("\r"), "Enter");
    expect(got.toString("utf8")).toBe("\x1b[200~--force -x done;\x1b[201~\r");
  });

  it("exits 1 for a turn that did not start, also with --allow-unverified, still printing the result", async () => {
    const logger = await world.startLogger("strict", ["--keep-on-enter"]);
    const cli = await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "--allow-unverified", "--json", "--", "hello"]);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({ result: "failed", reason: expect.stringContaining("the draft stayed in the composer") });
    expect(cli.stderr).toContain("agy-bridge send: failed:");
  });

  it("exits 0 with delivered when the fake TUI takes the turn", async () => {
    const tui = await world.startFakeTui("agy");
    const cli = await runCli(["send", "--pane", "=agy", "-L", world.socketName, "--", "Summarise", "the", "README"]);
    expect(cli).toEqual({ code: 0, stdout: "delivered: The turn was submitted: the draft left the composer after Enter.\n", stderr: "" });
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "Summarise the README" }]);
  });

  it("refuses to append to a typed draft unless --clear-draft", async () => {
    const tui = await world.startFakeTui("agy");
    await world.tmux(["send-keys", "-t", tui.paneId, "-l", "someone typing"]);
    await world.waitForScreen(tui.paneId, (s) => s.includes("> someone typing"), "the draft");
    const refused = await runCli(["send", "--pane", tui.paneId, "-L", world.socketName, "--json", "--", "mine"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      result: "failed",
      reason: expect.stringContaining("draft someone typed"),
      screen: { state: "ready", composer: "draft", draft: "someone typing" },
    });
    const cleared = await runCli(["send", "--pane", tui.paneId, "-L", world.socketName, "--clear-draft", "--json", "--", "mine"]);
    expect(cleared.code).toBe(0);
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "mine" }]);
  });

  it("refuses text with a NUL byte from stdin and types nothing", async () => {
    const logger = await world.startLogger("nul");
    const cli = await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "-"], "binary\u0000data");
    expect(cli.code).toBe(1);
    expect(cli.stderr).toBe("agy-bridge send: The turn text contains a NUL byte; send text, not binary data.\n");
    await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "--", "after"]);
    expect((await logger.waitForBytes((b) => b.includes("\r"), "the later turn")).toString("utf8")).toBe("\x1b[200~after\x1b[201~\r");
  });
});
