/**
 * Discovery against real agy-shaped processes through the real /proc: the
 * simulator under the `…/bin/agy` launcher (spike-notes §2.1 processes, §2.2
 * pane → subtree, §10.2 fd ↔ net/tcp inodes and transports, §10.3 tokens).
 * Scans are scoped to each test's own pids so parallel tests' simulators are
 * not seen, except the one test of the unscoped scan.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { discoverServers, DiscoveryError, findServer, type DiscoveredServer } from "../../src/discovery/index.js";
import { createPrivateTmux } from "../support/tmux-server.js";
import { BIN, ROOT, startLauncher, startSimAsAgy, tempCache, type AgyProcess } from "./support/agy-process.js";

const TOKEN_MAIN = "tok-main-7d1e0c";
const TOKEN_DECOY = "tok-decoy-33a9f2";
const NO_TMUX = { tmuxServers: [] } as const;

let cache: ReturnType<typeof tempCache>;
let main: AgyProcess;
let decoy: AgyProcess;

beforeAll(async () => {
  cache = tempCache();
  // Read-only for every test below: nothing here changes their conversations.
  [main, decoy] = await Promise.all([startSimAsAgy(cache.dir, TOKEN_MAIN), startSimAsAgy(cache.dir, TOKEN_DECOY)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([main?.stop(), decoy?.stop()]);
  cache.remove();
});

function only(servers: DiscoveredServer[], pid: number): DiscoveredServer {
  const found = servers.filter((s) => s.pid === pid);
  expect(found.map((s) => s.pid)).toEqual([pid]);
  return found[0] as DiscoveredServer;
}

async function rejection(promise: Promise<unknown>): Promise<DiscoveryError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof DiscoveryError)) throw new Error(`expected a DiscoveryError, got ${String(error)}`);
  return error;
}

describe("discovery of real agy processes", () => {
  it("finds the agy with its first-argument token, each listener's transport by handshake, TLS preferred, and its conversation", async () => {
    const { servers } = await discoverServers({ pids: [main.info.agyPid], ...NO_TMUX });
    const server = only(servers, main.info.agyPid);
    expect(server.executable).toMatch(/\/bin\/agy$/);
    expect(server.csrfToken).toBe(TOKEN_MAIN);
    expect(server.csrfTokenPresent).toBe(true);
    expect(server.csrfTokenSources).toContain("its first argument --csrf_token");
    expect(server.url).toBe(main.info.tlsUrl);
    const byPort = Object.fromEntries(server.listeners.map((l) => [l.port, [l.transport, l.heartbeatOk, l.source]]));
    expect(byPort).toEqual({
      [Number(new URL(main.info.tlsUrl).port)]: ["tls", true, "fd"],
      [Number(new URL(main.info.plainUrl).port)]: ["plain", true, "fd"],
    });
    expect(server.conversations.map((c) => c.conversationId)).toEqual([main.info.conversationId]);
    // `sim --as-agy` gives its children agy's ANTIGRAVITY_LS_VERSION for the persona it plays (1.0.10 by default).
    expect(server.version).toBe("1.0.10");
  });

  it("binds the owner of a conversation when a decoy agy on other ports hosts another one", async () => {
    const pids = [main.info.agyPid, decoy.info.agyPid];
    const forMain = await findServer({ conversationId: main.info.conversationId }, { pids, ...NO_TMUX });
    expect(forMain).toMatchObject({ pid: main.info.agyPid, url: main.info.tlsUrl, csrfToken: TOKEN_MAIN, conversationId: main.info.conversationId });
    const forDecoy = await findServer({ conversationId: decoy.info.conversationId }, { pids, ...NO_TMUX });
    expect(forDecoy).toMatchObject({ pid: decoy.info.agyPid, url: decoy.info.tlsUrl, csrfToken: TOKEN_DECOY });
  });

  it("refuses to guess between two servers when nothing picks one, listing pids and ports but no token", async () => {
    const error = await rejection(findServer({}, { pids: [main.info.agyPid, decoy.info.agyPid], ...NO_TMUX }));
    expect(error.reason).toBe("ambiguous");
    expect(error.candidates.map((c) => c.pid).sort()).toEqual([main.info.agyPid, decoy.info.agyPid].sort());
    expect(error.message).toContain(`pid ${main.info.agyPid}`);
    const shown = error.message + JSON.stringify(error.candidates);
    expect(shown).not.toContain(TOKEN_MAIN);
    expect(shown).not.toContain(TOKEN_DECOY);
  });

  it("says which conversation is hosted nowhere", async () => {
    const error = await rejection(findServer({ conversationId: "no-such-conversation" }, { pids: [main.info.agyPid], ...NO_TMUX }));
    expect(error.reason).toBe("not_found");
    expect(error.message).toContain("no-such-conversation");
  });

  it("sees this test's agy in an unscoped scan of the whole machine, whatever else runs", async () => {
    const { servers, steps } = await discoverServers(NO_TMUX);
    const server = only(servers, main.info.agyPid);
    expect(server.csrfToken).toBe(TOKEN_MAIN);
    expect(steps[0]).toMatchObject({ step: "processes", status: "ok" });
  });
});

describe("tokens that live elsewhere", () => {
  it("finds the token when it is only in the environment of agy's child", async () => {
    const own = tempCache();
    const token = "tok-env-only-91b2";
    const agy = await startLauncher(own.dir, { launcherArgs: [], childEnv: { ANTIGRAVITY_CSRF_TOKEN: token }, simArgs: ["--csrf_token", token] });
    try {
      const { servers } = await discoverServers({ pids: [agy.info.agyPid], ...NO_TMUX });
      const server = only(servers, agy.info.agyPid);
      expect(server.csrfToken).toBe(token);
      expect(server.csrfTokenSources).toEqual([`the environment of its child pid ${agy.info.pid}`]);
      expect(server.url).toBe(agy.info.tlsUrl);
      expect(server.conversations.map((c) => c.conversationId)).toEqual([agy.info.conversationId]);
    } finally {
      await agy.stop();
      own.remove();
    }
  });

  it("says a token is needed and was not found when the listeners answer 401", async () => {
    const own = tempCache();
    const token = "tok-hidden-5c3e";
    // The token is only in the simulator's own argv, where discovery does not look.
    const agy = await startLauncher(own.dir, { launcherArgs: [], simArgs: ["--csrf_token", token] });
    try {
      const { servers, steps } = await discoverServers({ pids: [agy.info.agyPid], ...NO_TMUX });
      const server = only(servers, agy.info.agyPid);
      expect(server.url).toBeUndefined();
      expect(server.csrfTokenPresent).toBe(false);
      expect(server.listeners.map((l) => [l.httpStatus, l.error])).toEqual([
        [401, "answered 401: a CSRF token is needed and none was found"],
        [401, "answered 401: a CSRF token is needed and none was found"],
      ]);
      expect(steps.filter((s) => s.status === "fail").every((s) => /token/.test(s.hint ?? ""))).toBe(true);
      const error = await rejection(findServer({}, { pids: [agy.info.agyPid], ...NO_TMUX }));
      expect(error.reason).toBe("no_server");
      expect(JSON.stringify({ servers, steps }) + error.message).not.toContain(token);
    } finally {
      await agy.stop();
      own.remove();
    }
  });

  it("refuses two different tokens for one server and says where each was seen, never what", async () => {
    const own = tempCache();
    const agy = await startLauncher(own.dir, { launcherArgs: ["--csrf_token", "tok-argv-aaaa"], childEnv: { ANTIGRAVITY_CSRF_TOKEN: "tok-env-bbbb" } });
    try {
      const result = await discoverServers({ pids: [agy.info.agyPid], ...NO_TMUX });
      const server = only(result.servers, agy.info.agyPid);
      expect(server.csrfTokenPresent).toBe(false);
      expect(server.url).toBeUndefined();
      const credentials = result.steps.find((s) => s.step === "credentials");
      expect(credentials?.status).toBe("fail");
      expect(credentials?.detail).toContain("2 different CSRF tokens");
      expect(credentials?.detail).toContain(`child pid ${agy.info.pid}`);
      expect(JSON.stringify(result)).not.toMatch(/tok-argv-aaaa|tok-env-bbbb/);
    } finally {
      await agy.stop();
      own.remove();
    }
  });
});

describe("ownership conflicts and panes", () => {
  it("refuses when two servers claim one conversation", async () => {
    const own = tempCache();
    const [first, second] = await Promise.all([startSimAsAgy(own.dir, "tok-first-1a"), startSimAsAgy(own.dir, "tok-second-2b")]);
    try {
      const client = createAgyRpcClient({ baseUrl: second.info.tlsUrl, csrfToken: "tok-second-2b" });
      await client.startCascade({ conversationId: first.info.conversationId });
      await client.close();
      const error = await rejection(findServer({ conversationId: first.info.conversationId }, { pids: [first.info.agyPid, second.info.agyPid], ...NO_TMUX }));
      expect(error.reason).toBe("conflict");
      expect(error.candidates.map((c) => c.pid).sort()).toEqual([first.info.agyPid, second.info.agyPid].sort());
    } finally {
      await Promise.all([first.stop(), second.stop()]);
      own.remove();
    }
  });

  it("binds the agy running in a tmux pane on a private socket, and names the pane in sessions", async () => {
    const tmux = createPrivateTmux();
    const own = tempCache();
    const token = "tok-pane-0e4f";
    try {
      await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--csrf_token", token, "--speed", "0"], {
        cwd: ROOT,
        env: { AGY_BRIDGE_CACHE_DIR: own.dir },
      });
      await tmux.waitForScreen("agy", (s) => s.includes("? for shortcuts"), "the fake TUI", 30_000);
      const pane = { target: "=agy", socketName: tmux.socketName };
      const binding = await findServer({ pane });
      // The same agy through the pane id, the form tmux itself reports.
      const paneIdTarget = (await tmux.run(["display-message", "-p", "-t", "=agy:", "#{pane_id}"])).trim();
      expect((await findServer({ pane: { target: paneIdTarget, socketName: tmux.socketName } })).pid).toBe(binding.pid);
      expect(binding.csrfToken).toBe(token);
      expect(binding.how).toContain(`tmux pane =agy on -L ${tmux.socketName}`);
      // Scoped to the pane's pid from here on: the pane's server knows which pane holds it.
      const { servers, steps } = await discoverServers({ pids: [binding.pid as number], tmuxServers: [{ socketName: tmux.socketName }] });
      const paneId = (await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_id}"])).trim();
      expect(only(servers, binding.pid as number).tmuxPane).toBe(paneId);
      expect(steps.find((s) => s.step === "tmux")?.detail).toBe(`1 tmux pane on -L ${tmux.socketName}; 1 holds an agy`);
    } finally {
      await tmux.kill();
      own.remove();
    }
  }, 60_000);
});
