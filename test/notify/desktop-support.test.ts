/**
 * Which desktop alerts a machine gets, and the sentence when it gets none;
 * and the macOS path, with a stand-in `osascript` (a real executable that
 * records its argv) in place of the system's: the request's text arrives as
 * arguments of the script's run handler, never inside the script.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMacNotifier, desktopSupport, type PendingNotice } from "../../src/notify/index.js";
import { until } from "../support/until.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe("desktopSupport", () => {
  it("uses the session bus on Linux, in the unix: form the D-Bus library reads", () => {
    expect(desktopSupport("linux", { DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus" })).toEqual({
      kind: "freedesktop",
      busAddress: "unix:path=/run/user/1000/bus",
    });
    expect(desktopSupport("linux", { DBUS_SESSION_BUS_ADDRESS: "unix:abstract=/tmp/dbus-Xy12,guid=0123" })).toEqual({
      kind: "freedesktop",
      busAddress: "unix:abstract=/tmp/dbus-Xy12",
    });
    // A D-Bus address escapes bytes with %XX; a list is separated by ';'.
    expect(desktopSupport("linux", { DBUS_SESSION_BUS_ADDRESS: "tcp:host=127.0.0.1,port=4000;unix:path=/tmp/my%20bus" })).toEqual({
      kind: "freedesktop",
      busAddress: "unix:path=/tmp/my bus",
    });
  });

  it("says what to set on Linux without a session bus address", () => {
    const support = desktopSupport("linux", {});
    expect(support).toEqual({
      kind: "unsupported",
      reason:
        "--notify-desktop needs your desktop session's bus, and DBUS_SESSION_BUS_ADDRESS is not set: run it from a terminal of your desktop session, or set it (usually unix:path=/run/user/$(id -u)/bus)",
    });
  });

  it("refuses a bus reached other than over a unix socket (unixexec would run a program)", () => {
    expect(desktopSupport("linux", { DBUS_SESSION_BUS_ADDRESS: "unixexec:path=/bin/sh,argv1=-c" })).toMatchObject({
      kind: "unsupported",
      reason: expect.stringMatching(/unix socket only .* names unixexec$/),
    });
  });

  it("uses Notification Centre on macOS and says other systems are not supported", () => {
    expect(desktopSupport("darwin", {})).toEqual({ kind: "macos" });
    expect(desktopSupport("win32", { DBUS_SESSION_BUS_ADDRESS: "unix:path=/x" })).toEqual({
      kind: "unsupported",
      reason: "--notify-desktop works on Linux (and other freedesktop desktops) and macOS, not on win32; use serve's page, ntfy or Telegram for alerts instead",
    });
  });
});

describe("macOS alerts", { timeout: 30_000 }, () => {
  it("run osascript with the title and body as the run handler's arguments, never in the script", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-osascript-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const log = join(dir, "argv.jsonl");
    const fake = join(dir, "osascript");
    await writeFile(fake, `#!${process.execPath}\nrequire("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + "\\n");\n`);
    await chmod(fake, 0o755);
    const problems: string[] = [];
    const notifier = createMacNotifier({ answerOn: "cli", command: fake, onProblem: (m) => problems.push(m) });
    cleanup.push(() => notifier.close());
    const target = `"; do shell script "touch ${join(dir, "pwned")}"; "`;
    const notice: PendingNotice = {
      conversationId: "cca36945-0000",
      interactionId: "int_1",
      request: { kind: "permission", action: "command", target, description: "" },
      url: "",
      host: "mac",
      escalated: false,
    };
    notifier.pending(notice);
    notifier.resolved({ ...notice, outcome: "approved" });
    await notifier.close();
    const lines = await until(
      async () =>
        (await readFile(log, "utf8").catch(() => ""))
          .trim()
          .split("\n")
          .filter((l) => l !== ""),
      "osascript to run",
    );
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual([
      "-e",
      "on run argv",
      "-e",
      "display notification (item 2 of argv) with title (item 1 of argv)",
      "-e",
      "end run",
      "agy cca36945: permission",
      `${target}\n\nApprove or deny it in agy's TUI or with: agy-bridge approve --conversation cca36945-0000`,
    ]);
    expect(problems).toEqual([]);
  });

  it("says so when osascript cannot run", async () => {
    const problems: string[] = [];
    const notifier = createMacNotifier({ answerOn: "page", command: "/nonexistent/osascript", onProblem: (m) => problems.push(m) });
    notifier.pending({
      conversationId: "c",
      interactionId: "i",
      request: { kind: "question", questions: [] },
      url: "http://x/#/interactions/i",
      host: "mac",
      escalated: false,
    });
    await notifier.close();
    expect(problems).toEqual([
      expect.stringMatching(/^desktop: \/nonexistent\/osascript could not be run \(.*ENOENT.*\); macOS alerts need \/usr\/bin\/osascript$/),
    ]);
  });
});
