/**
 * The discovery cache against real agy-shaped processes and the real /proc:
 * the simulator under the `…/bin/agy` launcher. A second discovery of the
 * same process asks the remembered listener at once (no Heartbeat); a
 * different identity behind the same pid (start time), an entry past its
 * age, a URL the process does not listen on, or a process that is gone are
 * each seen as such. The file never holds the CSRF token.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cachedLocate } from "../../src/cli/cached-locate.js";
import { createDiscoveryCache, discoverServers, type DiscoveredServer, type DiscoverOptions } from "../../src/discovery/index.js";
import { createAgyRpcClient, type AgyRpcClient, type AgyRpcClientOptions } from "../../src/rpc/client.js";
import { until } from "../support/until.js";
import { alive, startSimAsAgy, tempCache, type AgyProcess } from "./support/agy-process.js";

const TOKEN = "tok-cache-5b7e21aa";

let launchers: ReturnType<typeof tempCache>;
let agy: AgyProcess;

beforeAll(async () => {
  launchers = tempCache();
  agy = await startSimAsAgy(launchers.dir, TOKEN);
}, 60_000);

afterAll(async () => {
  await agy?.stop();
  launchers.remove();
});

/** A client factory that counts the Heartbeats and conversation lists it is asked for. */
function counting(): { calls: { heartbeat: number; list: number }; createClient: (o: AgyRpcClientOptions) => AgyRpcClient } {
  const calls = { heartbeat: 0, list: 0 };
  const createClient = (options: AgyRpcClientOptions): AgyRpcClient => {
    const client = createAgyRpcClient(options);
    return new Proxy(client, {
      get(target, property) {
        if (property === "heartbeat") calls.heartbeat++;
        if (property === "getAllCascadeTrajectories") calls.list++;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return { calls, createClient };
}

async function discoverOnce(dir: string, extra: Partial<DiscoverOptions> & { now?: () => number } = {}) {
  const { now, ...rest } = extra;
  const cache = createDiscoveryCache({ dir, ...(now === undefined ? {} : { now }) });
  const { calls, createClient } = counting();
  const { servers } = await discoverServers({ pids: [agy.info.agyPid], tmuxServers: [], logPath: false, cache, createClient, ...rest });
  return { server: servers.find((s) => s.pid === agy.info.agyPid), calls };
}

function expectFound(server: DiscoveredServer | undefined): DiscoveredServer {
  expect(server?.url, JSON.stringify(server)).toBe(agy.info.tlsUrl);
  expect(server?.csrfToken).toBe(TOKEN);
  expect(server?.conversations.map((c) => c.conversationId)).toEqual([agy.info.conversationId]);
  return server as DiscoveredServer;
}

interface FileShape {
  version: number;
  entries: Record<string, { key: string; savedAt: number; url: string; listeners: unknown[] }>;
}

const readCacheFile = (dir: string) => JSON.parse(readFileSync(join(dir, "discovery.json"), "utf8")) as FileShape;

describe("the discovery cache", { timeout: 60_000 }, () => {
  it("asks the remembered listener of the same process at once, without handshakes or Heartbeat", async () => {
    const dir = tempCache();
    try {
      const first = await discoverOnce(dir.dir);
      const full = expectFound(first.server);
      expect(first.calls.heartbeat).toBeGreaterThan(0);
      const second = await discoverOnce(dir.dir);
      const cached = expectFound(second.server);
      expect(second.calls).toEqual({ heartbeat: 0, list: 1 });
      expect(cached.listeners).toEqual(full.listeners);
    } finally {
      dir.remove();
    }
  });

  it("keeps ports and verdicts on disk, mode 0600, never the CSRF token", async () => {
    const dir = tempCache();
    try {
      await discoverOnce(dir.dir);
      const path = join(dir.dir, "discovery.json");
      const text = readFileSync(path, "utf8");
      expect(text).not.toContain(TOKEN);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const entry = readCacheFile(dir.dir).entries[String(agy.info.agyPid)];
      expect(entry?.url).toBe(agy.info.tlsUrl);
      // The identity: boot id, command name and the start time from /proc/<pid>/stat field 22.
      const stat = readFileSync(`/proc/${agy.info.agyPid}/stat`, "utf8");
      const startTime = stat
        .slice(stat.lastIndexOf(")") + 1)
        .trim()
        .split(/\s+/)[19];
      expect(entry?.key.endsWith(`\u0000${startTime}`)).toBe(true);
    } finally {
      dir.remove();
    }
  });

  it("probes afresh when the pid's start time is not the one remembered (a restarted process on the same pid)", async () => {
    const dir = tempCache();
    try {
      await discoverOnce(dir.dir);
      const file = readCacheFile(dir.dir);
      const entry = file.entries[String(agy.info.agyPid)];
      if (entry === undefined) throw new Error(`no entry for pid ${agy.info.agyPid}: ${JSON.stringify(file)}`);
      const realKey = entry.key;
      entry.key = realKey.replace(/\u0000(\d+)$/, (_m, start: string) => `\u0000${Number(start) + 1}`);
      writeFileSync(join(dir.dir, "discovery.json"), JSON.stringify(file));
      const again = await discoverOnce(dir.dir);
      expectFound(again.server);
      expect(again.calls.heartbeat).toBeGreaterThan(0);
      expect(readCacheFile(dir.dir).entries[String(agy.info.agyPid)]?.key).toBe(realKey);
    } finally {
      dir.remove();
    }
  });

  it("probes afresh once an entry is older than the cache's bound", async () => {
    const dir = tempCache();
    try {
      let clock = 1_000_000;
      await discoverOnce(dir.dir, { now: () => clock });
      clock += 300_001;
      const later = await discoverOnce(dir.dir, { now: () => clock });
      expectFound(later.server);
      expect(later.calls.heartbeat).toBeGreaterThan(0);
    } finally {
      dir.remove();
    }
  });

  it("never sends the token to a remembered URL the process does not listen on; the full probe runs instead", async () => {
    const dir = tempCache();
    // A loopback server that is not agy's, recording what reaches it: the file is edited to name it.
    const seen: Array<string | undefined> = [];
    const stranger = createServer((req, res) => {
      seen.push(req.headers["x-codeium-csrf-token"] as string | undefined);
      res.writeHead(200, { "content-type": "application/json" }).end('{"trajectorySummaries":{}}');
    });
    await new Promise<void>((resolve) => stranger.listen(0, "127.0.0.1", resolve));
    try {
      await discoverOnce(dir.dir);
      const file = readCacheFile(dir.dir);
      const entry = file.entries[String(agy.info.agyPid)];
      if (entry === undefined) throw new Error(`no entry for pid ${agy.info.agyPid}`);
      entry.url = `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`;
      writeFileSync(join(dir.dir, "discovery.json"), JSON.stringify(file));
      const again = await discoverOnce(dir.dir);
      expectFound(again.server);
      expect(again.calls.heartbeat).toBeGreaterThan(0);
      expect(seen).toEqual([]);
    } finally {
      await new Promise((resolve) => stranger.close(resolve));
      dir.remove();
    }
  });

  it("drops the entry of a process that is gone at the next whole scan", async () => {
    const dir = tempCache();
    const other = await startSimAsAgy(launchers.dir, "tok-cache-gone-19c4");
    try {
      const cache = createDiscoveryCache({ dir: dir.dir });
      await discoverServers({ pids: [other.info.agyPid], tmuxServers: [], logPath: false, cache });
      expect(Object.keys(readCacheFile(dir.dir).entries)).toContain(String(other.info.agyPid));
      await other.stop();
      await until(() => (alive(other.info.agyPid) ? undefined : true), `pid ${other.info.agyPid} (the stopped agy) to leave /proc`, {
        ms: 10_000,
        everyMs: 20,
      });
      // A whole scan (no pids): every agy on this machine is probed; the one that exited is no longer kept.
      await discoverServers({ tmuxServers: [], logPath: false, cache: createDiscoveryCache({ dir: dir.dir }) });
      expect(Object.keys(readCacheFile(dir.dir).entries)).not.toContain(String(other.info.agyPid));
    } finally {
      await other.stop();
      dir.remove();
    }
  });

  it("the CLI's locate keeps its cache in $AGY_BRIDGE_CACHE_DIR and binds the conversation's owner", async () => {
    const dir = tempCache();
    try {
      const locate = cachedLocate({ AGY_BRIDGE_CACHE_DIR: dir.dir });
      const binding = await locate({ conversationId: agy.info.conversationId });
      expect(binding).toMatchObject({ pid: agy.info.agyPid, url: agy.info.tlsUrl, csrfToken: TOKEN });
      const text = readFileSync(join(dir.dir, "discovery.json"), "utf8");
      expect(Object.keys(readCacheFile(dir.dir).entries)).toContain(String(agy.info.agyPid));
      expect(text).not.toContain(TOKEN);
      expect(await locate({ conversationId: agy.info.conversationId })).toMatchObject({ pid: agy.info.agyPid, url: agy.info.tlsUrl });
    } finally {
      dir.remove();
    }
  });
});
