/**
 * Failures a caller must be able to tell apart, each with a clear sentence:
 * a dead pane, a wrong target, no tmux binary, no tmux server — from the
 * driver and from `agy-bridge send` (non-zero exit).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TmuxError } from "../../src/errors.js";
import { createTmuxDriver, type TmuxDriver } from "../../src/tmux/index.js";
import { runCli, runCliProcess } from "./support/run-cli.js";
import { createTmuxWorld, type TmuxWorld } from "./support/tmux-world.js";

let world: TmuxWorld;
let driver: TmuxDriver;

beforeEach(async () => {
  world = await createTmuxWorld();
  driver = createTmuxDriver({ socket: { name: world.socketName } });
});

afterEach(async () => {
  await world.dispose();
});

describe("a dead pane", () => {
  it("is reported as exited by the driver and by send, which exits 1", async () => {
    const logger = await world.startLogger("dying");
    const pid = await driver.panePid(logger.paneId);
    process.kill(pid, "SIGKILL");
    await expect.poll(async () => (await driver.paneInfo(logger.paneId)).dead).toBe(true);

    await expect(driver.sendKeys(logger.paneId, ["Enter"])).rejects.toMatchObject({ failure: "pane_dead", message: expect.stringContaining("has exited") });
    expect(await driver.deliverTurn(logger.paneId, "hello")).toEqual({ result: "failed", reason: expect.stringContaining("has exited") });
    const cli = await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "--", "hello"]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^agy-bridge send: failed: The program in tmux pane %\d+ \(%\d+\) has exited; restart agy/);
  });
});

describe("a wrong target", () => {
  it("names the missing pane id", async () => {
    await world.startLogger("present");
    await expect(driver.panePid("%9999")).rejects.toMatchObject({ failure: "no_target", message: expect.stringContaining("There is no tmux pane %9999") });
    const cli = await runCli(["send", "--pane", "%9999", "-L", world.socketName, "--json", "--", "hello"]);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toEqual({ result: "failed", reason: expect.stringContaining("There is no tmux pane %9999") });
  });

  it("never matches a session by prefix", async () => {
    const logger = await world.startLogger("agy-main");
    await expect(driver.capturePane("=agy")).rejects.toMatchObject({ failure: "no_target" });
    await expect(driver.panePid("=agy-main")).resolves.toBe(await driver.panePid(logger.paneId));
  });

  it("refuses a bare session name before running tmux, and send exits 2", async () => {
    await expect(driver.panePid("agy")).rejects.toMatchObject({ code: "invalid_argument", message: expect.stringContaining("=main") });
    const cli = await runCli(["send", "--pane", "agy", "-L", world.socketName, "--", "hello"]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain("--pane must be a pane id like %3 or an exact session name like =main");
  });
});

describe("no tmux", () => {
  it("reports a missing binary from the driver", async () => {
    const missing = createTmuxDriver({ socket: { name: world.socketName }, tmuxBinary: join(world.dir, "no-such-tmux") });
    const error = await missing.panePid("%0").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TmuxError);
    expect(error).toMatchObject({ failure: "no_binary", message: expect.stringContaining("install tmux") });
  });

  it("makes send exit 1 with a sentence when tmux is not on PATH", async () => {
    const cli = await runCliProcess(["send", "--pane", "%0", "-L", world.socketName, "--", "hello"], { PATH: world.dir, HOME: world.dir });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^agy-bridge send: failed: The tmux program "tmux" could not be started \(ENOENT\); install tmux/);
  });

  it("reports a tmux server that is not running, by socket name and by path", async () => {
    const idle = createTmuxDriver({ socket: { name: `${world.socketName}-never-started` } });
    await expect(idle.panePid("%0")).rejects.toMatchObject({
      failure: "no_server",
      message: expect.stringContaining("No tmux server is running on tmux server -L"),
    });
    const byPath = createTmuxDriver({ socket: { path: join(world.dir, "no-socket") } });
    await expect(byPath.capturePane("%0")).rejects.toMatchObject({ failure: "no_server" });
    const cli = await runCli(["send", "--pane", "%0", "-S", join(world.dir, "no-socket"), "--", "hello"]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("No tmux server is running on tmux server -S");
  });
});

describe("a hung tmux", () => {
  it("is killed at the deadline and reported as a timeout naming the command", async () => {
    const hung = join(world.dir, "hung-tmux");
    // A stand-in binary that never answers; the driver's argv goes to it unchanged.
    writeFileSync(hung, "#!/bin/sh\nexec sleep 30\n", { mode: 0o755 });
    const driver = createTmuxDriver({ socket: { name: world.socketName }, tmuxBinary: hung, timeoutMs: 300 });
    await expect(driver.capturePane("%0")).rejects.toMatchObject({
      code: "timeout",
      failure: "timeout",
      message: expect.stringContaining("tmux capture-pane did not finish within 300 ms"),
    });
  });
});

describe("send usage errors", () => {
  it.each([
    ["no --pane", ["send", "--", "hi"], "--pane TARGET is required"],
    ["both -L and -S", ["send", "--pane", "%1", "-L", "a", "-S", "/tmp/b", "--", "hi"], "give -L or -S, not both"],
    ["no text", ["send", "--pane", "%1"], "needs TEXT"],
    ["an empty -L", ["send", "--pane", "%1", "-L", "", "--", "hi"], "socket name (-L) must be non-empty"],
    ["--url without --conversation", ["send", "--pane", "%1", "--url", "http://127.0.0.1:1", "--", "hi"], "--url needs --conversation"],
  ])("exits 2 for %s", async (_name, argv, message) => {
    const cli = await runCli(argv);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain(message);
  });
});

describe("send with --conversation and no --url", () => {
  it("exits 1 with discovery's sentence when no server owns the conversation, typing nothing", async () => {
    const logger = await world.startLogger("nobody");
    const cli = await runCli(["send", "--pane", logger.paneId, "-L", world.socketName, "--conversation", `no-such-${world.socketName}`, "--", "hi"]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^agy-bridge send: \S.*\n$/);
    expect(logger.bytes().length).toBe(0);
  });
});
