/**
 * agy's CSRF token goes only to a listener proven to be agy's. When agy's
 * fds cannot be read (a hand-made /proc stands in), discovery guesses from
 * the host-wide table; an impostor loopback server there — one that answers
 * exactly like agy, 401 without the token and 200 with it — records whether
 * it was ever sent the token. It must not be, and must never become the
 * server's URL.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createDoctorCommand } from "../../src/cli/doctor-command.js";
import { discoverServers, DiscoveryError, findServer, HINTS } from "../../src/discovery/index.js";
import { runCommand } from "../support/cli-io.js";
import { startSimAsAgy, tempCache, type AgyProcess } from "./support/agy-process.js";
import { createFakeProc, OWN_UID } from "./support/fake-proc.js";

const NO_TMUX = { tmuxServers: [] } as const;
const FAKE_AGY = "/opt/fake/bin/agy";
const OTHER_UID = OWN_UID + 4242;

interface Impostor {
  port: number;
  url: string;
  /** Every x-codeium-csrf-token it received. */
  tokens: string[];
  /** How many requests reached it at all. */
  requests(): number;
  close(): Promise<void>;
}

/**
 * A plain-HTTP server that mimics agy's answers: with `acceptsAnything`, 200
 * to every call; otherwise 401 (Connect `unauthenticated`) without a token
 * and 200 with any token — the shape that would lure a careless client.
 */
async function startImpostor(acceptsAnything = false): Promise<Impostor> {
  const tokens: string[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    const token = req.headers["x-codeium-csrf-token"];
    if (typeof token === "string") tokens.push(token);
    req.resume();
    req.on("end", () => {
      if (token === undefined && !acceptsAnything) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "unauthenticated", message: "missing CSRF token" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    tokens,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function withBlindAgy(
  token: string,
  build: (agy: AgyProcess, ports: { tls: number; plain: number }) => Parameters<typeof createFakeProc>,
  body: (options: { procRoot: string; pids: number[]; logPath: false; tmuxServers: readonly [] }, agy: AgyProcess) => Promise<void>,
): Promise<void> {
  const cache = tempCache();
  const agy = await startSimAsAgy(cache.dir, token);
  const fake = createFakeProc(...build(agy, { tls: Number(new URL(agy.info.tlsUrl).port), plain: Number(new URL(agy.info.plainUrl).port) }));
  try {
    await body({ procRoot: fake.root, pids: [agy.info.agyPid], logPath: false, ...NO_TMUX }, agy);
  } finally {
    fake.remove();
    await agy.stop();
    cache.remove();
  }
}

describe("the CSRF token and listeners that are not proven to be agy's", () => {
  it("never sends the token to another user's listener in the host-wide table, and binds agy's own user's listener", async () => {
    const token = "tok-impostor-1f3a";
    const impostor = await startImpostor();
    try {
      await withBlindAgy(
        token,
        (agy, ports) => [
          [{ pid: agy.info.agyPid, exe: FAKE_AGY, argv: [FAKE_AGY, "--csrf_token", token], fds: "unreadable" }],
          [
            { port: impostor.port, inode: "9101", uid: OTHER_UID },
            { port: ports.tls, inode: "9102" },
            { port: ports.plain, inode: "9103" },
          ],
        ],
        async (options, agy) => {
          const { servers, steps } = await discoverServers(options);
          expect(servers[0]?.url).toBe(agy.info.tlsUrl);
          expect(servers[0]?.listeners.map((l) => l.port)).not.toContain(impostor.port);
          const binding = await findServer({ conversationId: agy.info.conversationId }, options);
          expect(binding).toMatchObject({ url: agy.info.tlsUrl, csrfToken: token });
          expect(impostor.tokens).toEqual([]);
          expect(steps.find((s) => s.step === "listeners" && s.detail.startsWith("guessing"))?.detail).toContain(`owned by uid ${OWN_UID}`);
          const doctor = await runCommand(createDoctorCommand({ discover: () => discoverServers(options) }), []);
          expect(doctor.stdout).toContain(
            `pid ${agy.info.agyPid} at ${agy.info.tlsUrl} (guessed: its fds are unreadable, so this listener is not proven to be its own)`,
          );
          expect(doctor.stdout).not.toContain(token);
          expect(impostor.tokens).toEqual([]);
        },
      );
    } finally {
      await impostor.close();
    }
  }, 60_000);

  it("does not send the token to a same-user listener that answers without one, nor choose it", async () => {
    const token = "tok-impostor-77c2";
    const impostor = await startImpostor(true);
    try {
      await withBlindAgy(
        token,
        (agy, ports) => [
          [{ pid: agy.info.agyPid, exe: FAKE_AGY, argv: [FAKE_AGY, "--csrf_token", token], fds: "unreadable" }],
          [
            { port: impostor.port, inode: "9201" },
            { port: ports.tls, inode: "9202" },
          ],
        ],
        async (options, agy) => {
          const { servers, steps } = await discoverServers(options);
          expect(servers[0]?.url).toBe(agy.info.tlsUrl);
          expect(impostor.requests()).toBeGreaterThan(0);
          expect(impostor.tokens).toEqual([]);
          const step = steps.find((s) => s.step === "listener" && s.port === impostor.port);
          expect(step).toMatchObject({ status: "fail", hint: HINTS.notAgy });
          expect(step?.detail).toContain("answered Heartbeat without a CSRF token");
          expect(step?.detail).toContain("the token was not sent");
        },
      );
    } finally {
      await impostor.close();
    }
  }, 60_000);

  it("sends the token to no guessed listener when agy's user is unknown, says so, and refuses to bind rather than guess", async () => {
    const token = "tok-impostor-0b9e";
    const impostor = await startImpostor();
    try {
      await withBlindAgy(
        token,
        (agy, ports) => [
          [{ pid: agy.info.agyPid, exe: FAKE_AGY, argv: [FAKE_AGY, "--csrf_token", token], fds: "unreadable", uid: "unreadable" }],
          [
            { port: impostor.port, inode: "9301" },
            { port: ports.tls, inode: "9302" },
          ],
        ],
        async (options, agy) => {
          const { servers, steps } = await discoverServers(options);
          expect(servers[0]?.url).toBeUndefined();
          expect(servers[0]?.csrfToken).toBeUndefined();
          expect(servers[0]?.csrfTokenPresent).toBe(true);
          expect(steps.find((s) => s.step === "listeners" && s.detail.startsWith("guessing"))?.detail).toContain(
            "its user is unknown, so none of them is sent the CSRF token",
          );
          for (const port of [impostor.port, Number(new URL(agy.info.tlsUrl).port)]) {
            const step = steps.find((s) => s.step === "listener" && s.port === port);
            expect(step).toMatchObject({ status: "fail", hint: HINTS.guessed });
            expect(step?.detail).toContain(`cannot be shown to be the listener of pid ${agy.info.agyPid}`);
          }
          const error = await findServer({ conversationId: agy.info.conversationId }, options).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(DiscoveryError);
          expect(impostor.requests()).toBeGreaterThan(0);
          expect(impostor.tokens).toEqual([]);
        },
      );
    } finally {
      await impostor.close();
    }
  }, 60_000);

  it("does not probe a port named by agy's log when another user owns it now", async () => {
    const token = "tok-impostor-5d21";
    const impostor = await startImpostor();
    const cache = tempCache();
    const agy = await startSimAsAgy(cache.dir, token);
    const home = mkdtempSync(join(tmpdir(), "agy-home-"));
    mkdirSync(join(home, ".gemini", "antigravity-cli"), { recursive: true });
    const log = join(home, ".gemini", "antigravity-cli", "cli.log");
    writeFileSync(log, `I0101 listening on random port at ${impostor.port} for HTTP\n`);
    const fake = createFakeProc(
      [{ pid: agy.info.agyPid, exe: FAKE_AGY, argv: [FAKE_AGY, "--csrf_token", token], fds: "unreadable" }],
      [{ port: impostor.port, inode: "9401", uid: OTHER_UID }],
    );
    try {
      const { servers, steps } = await discoverServers({ procRoot: fake.root, pids: [agy.info.agyPid], logPath: log, ...NO_TMUX });
      expect(servers[0]?.url).toBeUndefined();
      expect(impostor.requests()).toBe(0);
      expect(steps.find((s) => s.step === "listeners" && s.port === impostor.port)?.detail).toBe(
        `port ${impostor.port} (from agy's log) belongs to uid ${OTHER_UID}, not to uid ${OWN_UID} that pid ${agy.info.agyPid} runs as, so it is not probed`,
      );
    } finally {
      fake.remove();
      rmSync(home, { recursive: true, force: true });
      await agy.stop();
      cache.remove();
      await impostor.close();
    }
  }, 60_000);
});
