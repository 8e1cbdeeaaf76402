/**
 * The listener sources besides a process's own fds: agy's log port lines
 * (spike-notes §10.2, agy 1.2.x), and macOS `lsof -F pcn` output (recorded
 * format, see fixtures/README.md) — each leading to a real loopback server —
 * plus a caller-given URL, which skips discovery but not the loopback guard.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discoverServers, findServer, type RunCommand } from "../../src/discovery/index.js";
import { lsofListeners } from "../../src/discovery/listener-scan.js";
import { isAgyBridgeError } from "../../src/errors.js";
import { startSimServer } from "../../src/sim/index.js";
import { createFakeProc } from "./support/fake-proc.js";

const FAKE_AGY = "/opt/fake/bin/agy";

describe("listener sources", () => {
  it("takes candidate ports from agy's log when the fds are unreadable, instead of guessing host-wide", async () => {
    const sim = await startSimServer({ speed: 0 });
    const home = mkdtempSync(join(tmpdir(), "agy-home-"));
    mkdirSync(join(home, ".gemini", "antigravity-cli"), { recursive: true });
    writeFileSync(
      join(home, ".gemini", "antigravity-cli", "cli.log"),
      `I1130 listening on random port at ${sim.plainPort} for HTTP\nI1130 listening on random port at ${sim.tlsPort} for HTTPS (gRPC)\n`,
    );
    const fake = createFakeProc([{ pid: 4343, exe: FAKE_AGY, argv: [FAKE_AGY], fds: "unreadable", environ: { HOME: home } }], [{ port: 1, inode: "1" }]);
    try {
      const { servers, steps } = await discoverServers({ procRoot: fake.root, tmuxServers: [] });
      expect(servers[0]?.listeners.map((l) => [l.port, l.transport, l.source])).toEqual([
        [sim.tlsPort, "tls", "log"],
        [sim.plainPort, "plain", "log"],
      ]);
      expect(servers[0]?.url).toBe(sim.tlsUrl);
      expect(steps.some((s) => s.detail.startsWith("guessing"))).toBe(false);
    } finally {
      fake.remove();
      rmSync(home, { recursive: true, force: true });
      await sim.close();
    }
  });

  it("reads a macOS process's listeners from recorded lsof -F pcn output, asking lsof with -a so the pid filter holds", async () => {
    const calls: string[][] = [];
    const run: RunCommand = async (file, args) => {
      calls.push([file, ...args]);
      return { code: 0, stdout: readFileSync(join(import.meta.dirname, "fixtures/lsof-listen-F-pcn.txt"), "utf8"), stderr: "" };
    };
    const attribution = await lsofListeners(run, 52140, 1000);
    expect(calls).toEqual([["lsof", "-nP", "-a", "-p", "52140", "-iTCP", "-sTCP:LISTEN", "-F", "pcn"]]);
    expect(attribution).toEqual({
      attributed: true,
      listeners: [
        { host: "127.0.0.1", port: 52548, source: "lsof" },
        { host: "127.0.0.1", port: 52549, source: "lsof" },
        { host: "::1", port: 52550, source: "lsof" },
      ],
    });
  });

  it("finds a server on macOS through ps and lsof, then probes it like anywhere else", async () => {
    const sim = await startSimServer({ speed: 0 });
    const conversation = sim.engine.startHeadless();
    const run: RunCommand = async (file) =>
      file === "ps"
        ? { code: 0, stdout: "    1     0 /sbin/launchd\n  777     1 /Applications/Antigravity.app/bin/agy\n", stderr: "" }
        : { code: 0, stdout: `p777\ncagy\nf9\nn127.0.0.1:${sim.tlsPort}\nf10\nn127.0.0.1:${sim.plainPort}\n`, stderr: "" };
    try {
      const { servers } = await discoverServers({ platform: "darwin", run, tmuxServers: [] });
      expect(servers.map((s) => [s.pid, s.url, s.listeners.map((l) => l.source)])).toEqual([[777, sim.tlsUrl, ["lsof", "lsof"]]]);
      expect(servers[0]?.conversations.map((c) => c.conversationId)).toContain(conversation.id);
    } finally {
      await sim.close();
    }
  });
});

describe("a URL given by the caller", () => {
  it("skips discovery and keeps the given token and conversation", async () => {
    const binding = await findServer({ url: "https://127.0.0.1:5555/", csrfToken: "given", conversationId: "c1" }, { procRoot: "/nonexistent-proc" });
    expect(binding).toEqual({
      url: "https://127.0.0.1:5555",
      csrfToken: "given",
      conversationId: "c1",
      how: "the URL given by the caller (discovery skipped)",
    });
  });

  it("is still refused when it is not loopback", async () => {
    const error = await findServer({ url: "https://10.0.0.8:5555" }).catch((e: unknown) => e);
    expect(isAgyBridgeError(error, "not_loopback")).toBe(true);
  });
});
