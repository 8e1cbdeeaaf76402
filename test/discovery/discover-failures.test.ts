/**
 * Discovery's failure paths, each explained in one sentence with a hint:
 * nothing running, listeners that cannot be attributed (spike-notes §1.1,
 * §2.4: bounded host-wide fallback), a listener that accepts and says
 * nothing (a timeout, not a hang), a dead port, a non-agy HTTP service.
 * Where /proc cannot be put into the needed state, a hand-made /proc tree
 * in the kernel's formats stands in, pointing at real loopback servers.
 */
import { rmSync, symlinkSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { discoverServers, DiscoveryError, findServer, HINTS } from "../../src/discovery/index.js";
import { createFakeProc, OWN_UID } from "./support/fake-proc.js";
import { startSimAsAgy, tempCache } from "./support/agy-process.js";

const NO_TMUX = { tmuxServers: [] } as const;
const FAKE_AGY = "/opt/fake/bin/agy";

async function listen(server: net.Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  return (server.address() as AddressInfo).port;
}

/** A port that was just free: bound, then closed. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("discovery failure paths", () => {
  it("finds nothing when no agy runs: an empty list, a step that says so, and findServer fails at once with a sentence", async () => {
    const { servers, steps } = await discoverServers({ pids: [], ...NO_TMUX });
    expect(servers).toEqual([]);
    expect(steps).toEqual([{ step: "processes", status: "fail", detail: "no agy or language_server process found in /proc", hint: HINTS.noProcess }]);
    const error = await findServer({}, { pids: [], ...NO_TMUX }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscoveryError);
    expect((error as DiscoveryError).reason).toBe("no_server");
    expect((error as DiscoveryError).message).toMatch(/^no usable agy language server: no agy process is running; /);
  });

  it("guesses from the host-wide table when a process's fds are unreadable, says so, and still finds the owner of the conversation", async () => {
    const cache = tempCache();
    const token = "tok-blind-8d0a";
    const agy = await startSimAsAgy(cache.dir, token);
    const tlsPort = Number(new URL(agy.info.tlsUrl).port);
    const plainPort = Number(new URL(agy.info.plainUrl).port);
    const dead = await deadPort();
    const fake = createFakeProc(
      [{ pid: agy.info.agyPid, exe: FAKE_AGY, argv: [FAKE_AGY, "--csrf_token", token], fds: "unreadable" }],
      [
        { port: tlsPort, inode: "9001" },
        { port: plainPort, inode: "9002", host: "::ffff:127.0.0.1" },
        { port: dead, inode: "9003" },
        { port: 8080, inode: "9004", host: "10.0.0.5" },
      ],
    );
    try {
      const options = { procRoot: fake.root, pids: [agy.info.agyPid], logPath: false as const, ...NO_TMUX };
      const { servers, steps } = await discoverServers(options);
      expect(servers).toHaveLength(1);
      const server = servers[0];
      expect(server?.url).toBe(agy.info.tlsUrl);
      expect(server?.listeners.map((l) => [l.port, l.transport, l.source])).toEqual(
        [
          [tlsPort, "tls", "fallback"],
          [plainPort, "plain", "fallback"],
        ].sort((a, b) => (a[0] as number) - (b[0] as number)),
      );
      const listenerSteps = steps.filter((s) => s.step === "listeners");
      expect(listenerSteps.map((s) => [s.status, s.hint])).toEqual([
        ["warn", HINTS.fdsUnreadable],
        ["warn", HINTS.fdsUnreadable],
      ]);
      expect(listenerSteps[0]?.detail).toContain("cannot be attributed (its fds are unreadable: ENOENT)");
      expect(listenerSteps[1]?.detail).toContain(
        `guessing: probing 3 of 3 loopback listeners owned by uid ${OWN_UID} (pid ${agy.info.agyPid}'s user) from the host-wide table`,
      );
      // agy's own user's sockets, refusing a tokenless call as agy does: the token went to them only then.
      expect(server?.listeners.map((l) => [l.trust, l.tokenSent])).toEqual([
        ["same_user", true],
        ["same_user", true],
      ]);
      const binding = await findServer({ conversationId: agy.info.conversationId }, options);
      expect(binding).toMatchObject({ pid: agy.info.agyPid, url: agy.info.tlsUrl, csrfToken: token });
    } finally {
      fake.remove();
      await agy.stop();
      cache.remove();
    }
  }, 60_000);

  it("gives each failing listener its own sentence and hint: silent (a timeout, not a hang), refused, closing, and not agy", async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    const closing = net.createServer((socket) => socket.destroy());
    const notAgy = http.createServer((_req, res) => {
      res.writeHead(404);
      res.end("not found");
    });
    const [silentPort, notAgyPort, closingPort, dead] = await Promise.all([listen(silent), listen(notAgy), listen(closing), deadPort()]);
    const fake = createFakeProc(
      [{ pid: 4242, exe: FAKE_AGY, argv: [FAKE_AGY], fds: ["7001", "7002", "7003", "7004"] }],
      [
        { port: silentPort, inode: "7001" },
        { port: notAgyPort, inode: "7002" },
        { port: dead, inode: "7003" },
        { port: closingPort, inode: "7004" },
      ],
    );
    try {
      const { servers, steps } = await discoverServers({ procRoot: fake.root, handshakeTimeoutMs: 300, rpcTimeoutMs: 500, ...NO_TMUX });
      expect(servers.map((s) => s.pid)).toEqual([4242]);
      expect(servers[0]?.url).toBeUndefined();
      const byPort = new Map(steps.filter((s) => s.step === "listener").map((s) => [s.port, s]));
      expect(byPort.get(silentPort)).toMatchObject({
        status: "fail",
        detail: `port ${silentPort} accepted the connection but sent nothing within 300 ms`,
        hint: HINTS.timeout,
      });
      expect(byPort.get(dead)).toMatchObject({ status: "fail", hint: HINTS.refused });
      expect(byPort.get(closingPort)).toMatchObject({ status: "fail", hint: HINTS.tlsFailed });
      expect(byPort.get(closingPort)?.detail).toMatch(
        /^port \d+: the (connection closed during the TLS handshake|TLS handshake failed \(\w+\)), and plain HTTP got no answer either$/,
      );
      expect(byPort.get(notAgyPort)).toMatchObject({
        status: "fail",
        detail: `port ${notAgyPort} (plain HTTP): answered Heartbeat with HTTP 404, so it is not agy's RPC listener`,
        hint: HINTS.notAgy,
      });
      const error = await findServer({}, { procRoot: fake.root, handshakeTimeoutMs: 300, rpcTimeoutMs: 500, ...NO_TMUX }).catch((e: unknown) => e);
      expect((error as DiscoveryError).reason).toBe("no_server");
      expect((error as DiscoveryError).message).toContain("pid 4242");
    } finally {
      fake.remove();
      for (const socket of sockets) socket.destroy();
      await Promise.all([silent, notAgy, closing].map((server) => new Promise((r) => server.close(r))));
    }
  });

  it("skips an agy in another network namespace and says why", async () => {
    const fake = createFakeProc([{ pid: 5151, exe: FAKE_AGY, argv: [FAKE_AGY], fds: [] }], []);
    rmSync(`${fake.root}/5151/ns/net`);
    symlinkSync("net:[1]", `${fake.root}/5151/ns/net`);
    try {
      const { servers, steps } = await discoverServers({ procRoot: fake.root, ...NO_TMUX });
      expect(servers).toEqual([]);
      expect(steps.find((s) => s.status === "warn")).toMatchObject({ step: "processes", hint: HINTS.otherNetns });
    } finally {
      fake.remove();
    }
  });
});
