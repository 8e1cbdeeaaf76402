/**
 * Which agy this is, learned without starting an agy binary (spike-notes
 * §14 #1): from the running process (the ANTIGRAVITY_LS_VERSION agy gives its
 * children, §10.3; a version directory in the executable's path), else the
 * banner in its tmux pane (§14 #3) — and whether the process is agy-bridge's
 * own simulator (issue 34, "Also"). Against real agy-shaped processes (the
 * simulator under the `…/bin/agy` launcher), a hand-made /proc, and a real
 * tmux server on a private socket.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { discoverServers, findServer, lookUpAgyVersion, paneBannerVersion } from "../../src/discovery/index.js";
import {
  compareAgyVersions,
  isNewerThanProbed,
  versionFromBanner,
  versionFromEnvironmentValue,
  versionFromExecutable,
  versionOfProcess,
} from "../../src/discovery/agy-version.js";
import { createSessionsCommand } from "../../src/cli/sessions-command.js";
import { createPrivateTmux } from "../support/tmux-server.js";
import { runCommand } from "../support/cli-io.js";
import { createFakeProc } from "./support/fake-proc.js";
import { startLauncher, startSimAsAgy, tempCache, type AgyProcess } from "./support/agy-process.js";

const NO_TMUX = { tmuxServers: [] } as const;

describe("reading a version from what agy shows (pure)", () => {
  it("takes agy's ANTIGRAVITY_LS_VERSION without its cli- prefix, and no word that is not a version", () => {
    expect(versionFromEnvironmentValue("cli-1.2.10")).toBe("1.2.10");
    expect(versionFromEnvironmentValue("cli-1.3.0-rc1")).toBe("1.3.0-rc1");
    expect(versionFromEnvironmentValue("cli-sim")).toBeUndefined();
    expect(versionFromEnvironmentValue("")).toBeUndefined();
    expect(versionFromEnvironmentValue(undefined)).toBeUndefined();
  });

  it("reads a version directory of the executable's path, never a hash or a plain bin directory", () => {
    expect(versionFromExecutable("/opt/agy/versions/1.2.10/bin/agy")).toBe("1.2.10");
    expect(versionFromExecutable("/home/u/.local/share/agy/1.2.17/agy (deleted)")).toBe("1.2.17");
    expect(versionFromExecutable("/usr/local/bin/agy")).toBeUndefined();
    expect(versionFromExecutable("/home/u/.cache/agy-bridge/launcher/0a1b2c3d4e5f6789/bin/agy")).toBeUndefined();
  });

  it("takes the last banner on screen, and not a reply that quotes the words", () => {
    const screen = [
      "$ agy",
      "",
      "      ▄▀▀▄        Antigravity CLI 1.2.1",
      "     ▀▀▀▀▀▀       someone@example.org (Google AI Pro)",
      "> which version is this?",
      "  You run Antigravity CLI 9.9.9 according to the docs.",
      "$ agy",
      "      ▄▀▀▄        Antigravity CLI 1.2.10",
      "─────",
      ">",
    ].join("\n");
    expect(versionFromBanner(screen)).toBe("1.2.10");
    expect(versionFromBanner("  You run Antigravity CLI 9.9.9\n>")).toBeUndefined();
    expect(versionFromBanner("")).toBeUndefined();
  });

  it("compares versions by number and says newer than probed only past 1.2.17", () => {
    expect(compareAgyVersions("1.2.10", "1.2.9")).toBeGreaterThan(0);
    expect(compareAgyVersions("1.2", "1.2.0")).toBe(0);
    expect(compareAgyVersions("sim", "1.2.0")).toBeUndefined();
    expect(isNewerThanProbed("1.2.17")).toBe(false);
    expect(isNewerThanProbed("1.3.2")).toBe(true);
    expect(isNewerThanProbed(null)).toBe(false);
  });

  it("marks the simulator from AGY_BRIDGE_SIMULATOR or the launcher's cli-sim, in agy's own environment or a child's", () => {
    const env = (entries: Record<string, string>) => new Map(Object.entries(entries));
    expect(versionOfProcess({ ownEnv: env({ AGY_BRIDGE_SIMULATOR: "1" }), childEnvs: [], executable: "/x/bin/agy" })).toMatchObject({
      simulator: true,
      agyVersion: null,
    });
    expect(versionOfProcess({ childEnvs: [{ pid: 7, env: env({ ANTIGRAVITY_LS_VERSION: "cli-sim" }) }], executable: "/x/bin/agy" })).toMatchObject({
      simulator: true,
      agyVersion: null,
    });
    expect(versionOfProcess({ childEnvs: [{ pid: 7, env: env({ ANTIGRAVITY_LS_VERSION: "cli-1.2.9" }) }], executable: "/x/bin/agy" })).toEqual({
      agyVersion: "1.2.9",
      agyVersionSource: "process",
      agyVersionDetail: "ANTIGRAVITY_LS_VERSION in the environment of its child pid 7",
      simulator: false,
    });
  });
});

describe("discovery of agy's version on real processes", { timeout: 60_000 }, () => {
  let cache: ReturnType<typeof tempCache>;
  let sim12: AgyProcess;
  let bare: AgyProcess;

  beforeAll(async () => {
    cache = tempCache();
    [sim12, bare] = await Promise.all([
      startSimAsAgy(cache.dir, "tok-version-12", ["--agy-version", "1.2"]),
      // The launcher started by hand, as a peer's test rig would: no agy-bridge sim around it.
      startLauncher(cache.dir, { launcherArgs: [] }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([sim12?.stop(), bare?.stop()]);
    cache?.remove();
  });

  it("reads the version `sim --as-agy --agy-version 1.2` gives its children, marks it a simulator, and says so in doctor's steps", async () => {
    const { servers, steps } = await discoverServers({ pids: [sim12.info.agyPid], ...NO_TMUX });
    expect(servers).toHaveLength(1);
    expect(servers[0]).toMatchObject({ agyVersion: "1.2", agyVersionSource: "process", simulator: true, version: "1.2" });
    const step = steps.find((s) => s.step === "version");
    // Either child of the launcher (the simulator, or its idle companion) carries agy's environment.
    expect(step?.detail).toMatch(
      new RegExp(
        `^pid ${sim12.info.agyPid}: agy 1\\.2 \\(from ANTIGRAVITY_LS_VERSION in the environment of its child pid \\d+\\); it is agy-bridge's simulator \\(agy-bridge sim --as-agy\\), not a real agy$`,
      ),
    );
    const binding = await findServer({ conversationId: sim12.info.conversationId }, { pids: [sim12.info.agyPid], ...NO_TMUX });
    expect(binding).toMatchObject({ pid: sim12.info.agyPid, agyVersion: "1.2", agyVersionSource: "process", simulator: true });
  });

  it("finds the same version again by pid and by the listener's URL alone (a session attached with --url)", async () => {
    const byPid = await lookUpAgyVersion({ pid: sim12.info.agyPid });
    expect(byPid).toMatchObject({ agyVersion: "1.2", agyVersionSource: "process", simulator: true, pid: sim12.info.agyPid });
    const byUrl = await lookUpAgyVersion({ url: sim12.info.plainUrl });
    expect(byUrl).toMatchObject({ agyVersion: "1.2", pid: sim12.info.agyPid });
    expect(await lookUpAgyVersion({ url: "http://127.0.0.1:1" })).toEqual({ agyVersion: null, agyVersionSource: null, simulator: false });
  });

  it("marks a launcher started by hand as a simulator with an unknown version", async () => {
    const { servers } = await discoverServers({ pids: [bare.info.agyPid], ...NO_TMUX });
    expect(servers[0]).toMatchObject({ version: "sim", simulator: true });
    expect(servers[0]?.agyVersion).toBeUndefined();
  });

  it("prints agyVersion, its source and simulator in sessions --json, and the version with (simulator) in the table", async () => {
    const command = createSessionsCommand({ discover: () => discoverServers({ pids: [sim12.info.agyPid, bare.info.agyPid], ...NO_TMUX }) });
    const json = await runCommand(command, ["--json"]);
    expect(json.code).toBe(0);
    const entries = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    const byPid = new Map(entries.map((e) => [e["pid"], e]));
    expect(byPid.get(sim12.info.agyPid)).toMatchObject({ agyVersion: "1.2", agyVersionSource: "process", simulator: true });
    expect(byPid.get(bare.info.agyPid)).toMatchObject({ agyVersion: null, agyVersionSource: null, simulator: true });
    const table = await runCommand(command, []);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^${sim12.info.agyPid}\\s+1\\.2 \\(simulator\\)\\s`, "m"));
  });
});

describe("versions from a hand-made /proc", () => {
  it("reads a real agy's version from its child's environment and its install directory, and never calls it a simulator", async () => {
    const proc = createFakeProc(
      [
        { pid: 500, exe: "/opt/agy/versions/1.2.10/bin/agy", argv: ["/opt/agy/versions/1.2.10/bin/agy"], fds: [] },
        { pid: 600, exe: "/usr/local/bin/agy", argv: ["/usr/local/bin/agy"], fds: [] },
        { pid: 601, ppid: 600, exe: "/bin/bash", argv: ["bash"], fds: [], environ: { ANTIGRAVITY_LS_VERSION: "cli-1.3.2" } },
      ],
      [],
    );
    try {
      const { servers, steps } = await discoverServers({ procRoot: proc.root, logPath: false, ...NO_TMUX });
      const byPid = new Map(servers.map((s) => [s.pid, s]));
      expect(byPid.get(500)).toMatchObject({ agyVersion: "1.2.10", agyVersionSource: "process" });
      expect(byPid.get(500)?.simulator).toBeUndefined();
      expect(byPid.get(600)).toMatchObject({ agyVersion: "1.3.2", agyVersionSource: "process" });
      const newer = steps.find((s) => s.step === "version" && s.pid === 600);
      expect(newer?.status).toBe("warn");
      expect(newer?.detail).toContain("newer than probed: agy-bridge's facts describe agy up to 1.2.17");
    } finally {
      proc.remove();
    }
  });
});

describe("the banner in agy's pane", { timeout: 60_000 }, () => {
  it("reads the version from the last banner in a pane's screen and scrollback, with a read only", async () => {
    const tmux = createPrivateTmux();
    const dir = tempCache();
    try {
      const file = join(dir.dir, "screen.txt");
      const rows = [
        "$ agy",
        "      ▄▀▀▄        Antigravity CLI 1.2.9",
        "     ▀▀▀▀▀▀       someone@example.org",
        ...Array.from({ length: 80 }, (_, i) => `  reply row ${i}`),
        ">",
      ];
      writeFileSync(file, `${rows.join("\n")}\n`);
      await tmux.newSession("agy", ["sh", "-c", `cat '${file}'; exec sleep 600`], { columns: 100, rows: 20 });
      await tmux.waitForScreen("agy", (s) => s.includes("reply row 79"), "the screen printed");
      const pane = { target: "=agy:", socketName: tmux.socketName };
      expect(await paneBannerVersion(pane)).toBe("1.2.9");
      // The exact session name as people write it (`=agy`, as `--pane` takes it) names the same pane.
      expect(await paneBannerVersion({ target: "=agy", socketName: tmux.socketName })).toBe("1.2.9");
      expect(await lookUpAgyVersion({ url: "http://127.0.0.1:1", pane })).toMatchObject({ agyVersion: "1.2.9", agyVersionSource: "screen" });
    } finally {
      await tmux.kill();
      dir.remove();
    }
  });
});
