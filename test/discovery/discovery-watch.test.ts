/**
 * Repeated discovery at the cost of what changed (discovery-watch.ts), against
 * real agy-shaped processes through the real /proc: while the same agy runs a
 * refresh is one conversations read; a process that starts or exits, a
 * server that stops answering, or the full-pass interval brings a full pass.
 * Each test scopes the scan to its own pids (parallel tests run simulators of
 * their own).
 */
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";
import { createProcSource } from "../../src/discovery/proc-source.js";
import { scanProcesses, type ScanIdentity } from "../../src/discovery/process-scan.js";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { createDiscoveryWatch } from "../../src/discovery/index.js";
import { alive, startSimAsAgy, tempCache } from "./support/agy-process.js";
import { until } from "../support/until.js";

const NO_TMUX = { tmuxServers: [] } as const;

it("refreshes a running agy's conversations with one read, without a full pass, and sees a new conversation", async () => {
  const cache = tempCache();
  const agy = await startSimAsAgy(cache.dir, "tok-watch-1");
  const watch = createDiscoveryWatch({ pids: [agy.info.agyPid], ...NO_TMUX });
  const client = createAgyRpcClient({ baseUrl: agy.info.plainUrl, csrfToken: "tok-watch-1" });
  try {
    const first = await watch.refresh();
    expect(first.map((s) => s.pid)).toEqual([agy.info.agyPid]);
    expect(first[0]!.conversations.map((c) => c.conversationId)).toEqual([agy.info.conversationId]);
    expect(watch.counts).toEqual({ full: 1, quick: 0 });

    const made = await client.startCascade({});
    const fresh = String(made["cascadeId"]);
    const second = await watch.refresh();
    expect(watch.counts).toEqual({ full: 1, quick: 1 });
    expect(second[0]!.conversations.map((c) => c.conversationId).sort()).toEqual([agy.info.conversationId, fresh].sort());
    // What the quick path cannot read anew stays as the full pass found it.
    expect(second[0]!.url).toBe(first[0]!.url);
    expect(second[0]!.csrfTokenPresent).toBe(true);
  } finally {
    await client.close();
    await watch.close();
    await agy.stop();
    cache.remove();
  }
}, 60_000);

it("runs a full pass when an agy process exits or starts, and when the full-pass interval has passed", async () => {
  const cache = tempCache();
  const a = await startSimAsAgy(cache.dir, "tok-watch-a");
  let b: Awaited<ReturnType<typeof startSimAsAgy>> | undefined;
  let now = 0;
  // The scan's scope is read at every refresh: the test adds the second agy's pid once it exists.
  const pids = [a.info.agyPid];
  const watch = createDiscoveryWatch({ pids, ...NO_TMUX, fullEveryMs: 60_000, now: () => now });
  try {
    expect((await watch.refresh()).map((s) => s.pid)).toEqual([a.info.agyPid]);
    await watch.refresh();
    expect(watch.counts).toEqual({ full: 1, quick: 1 });

    b = await startSimAsAgy(cache.dir, "tok-watch-b");
    pids.push(b.info.agyPid);
    const both = await watch.refresh();
    expect(watch.counts).toEqual({ full: 2, quick: 1 });
    expect(both.map((s) => s.pid).sort((x, y) => x - y)).toEqual([a.info.agyPid, b.info.agyPid].sort((x, y) => x - y));

    await a.stop();
    await until(async () => (alive(a.info.agyPid) ? undefined : true), `pid ${a.info.agyPid} to leave /proc`, { ms: 20_000, everyMs: 50 });
    const left = await watch.refresh();
    expect(watch.counts).toEqual({ full: 3, quick: 1 });
    expect(left.map((s) => s.pid)).toEqual([b.info.agyPid]);

    await watch.refresh();
    expect(watch.counts).toEqual({ full: 3, quick: 2 });
    now += 60_000;
    await watch.refresh();
    expect(watch.counts).toEqual({ full: 4, quick: 2 });
  } finally {
    await watch.close();
    await a.stop();
    await b?.stop();
    cache.remove();
  }
}, 90_000);

it("runs a full pass when a known server stops answering, and keeps the quick path once it answers again", async () => {
  const cache = tempCache();
  const agy = await startSimAsAgy(cache.dir, "tok-watch-stop");
  const watch = createDiscoveryWatch({ pids: [agy.info.agyPid], ...NO_TMUX, quickTimeoutMs: 300, rpcTimeoutMs: 300, handshakeTimeoutMs: 300 });
  try {
    await watch.refresh();
    // The simulator (the launcher's child, which answers) is stopped: the launcher still holds the listeners.
    process.kill(agy.info.pid, "SIGSTOP");
    try {
      const stuck = await watch.refresh();
      expect(watch.counts).toEqual({ full: 2, quick: 0 });
      // The full pass found the process but no listener answered.
      expect(stuck.map((s) => [s.pid, s.url])).toEqual([[agy.info.agyPid, undefined]]);
    } finally {
      process.kill(agy.info.pid, "SIGCONT");
    }
    const back = await until(
      async () => {
        const servers = await watch.refresh();
        return servers[0]?.url === undefined ? undefined : servers;
      },
      "the server to answer again",
      { ms: 20_000, everyMs: 50 },
    );
    expect(back[0]!.conversations.map((c) => c.conversationId)).toEqual([agy.info.conversationId]);
    const fulls = watch.counts.full;
    await watch.refresh();
    expect(watch.counts.full).toBe(fulls);
  } finally {
    await watch.close();
    await agy.stop();
    cache.remove();
  }
}, 60_000);

/** A copy of /bin/sleep named …/bin/agy under `dir`: a process discovery takes for agy (by its executable's name). */
function sleepNamedAgy(dir: string): string {
  const agyBinary = join(dir, "bin", "agy");
  mkdirSync(dirname(agyBinary), { recursive: true });
  copyFileSync("/bin/sleep", agyBinary);
  chmodSync(agyBinary, 0o755);
  return agyBinary;
}

it("identifies a pid again once it execs into agy, and not while its stat identity stays the same", async () => {
  const cache = tempCache();
  // `exec agy` in a shell, as in a tmux pane: the same pid becomes agy.
  const agyBinary = sleepNamedAgy(cache.dir);
  const shell = spawn("/bin/sh", ["-c", 'read line; exec "$0" 600', agyBinary], { stdio: ["pipe", "ignore", "ignore"] });
  const pid = shell.pid!;
  const identities = new Map<number, ScanIdentity>();
  const proc = createProcSource("/proc");
  try {
    const before = await scanProcesses(proc, { pids: [pid], identities });
    expect(before.processes).toEqual([]);
    const key = identities.get(pid)?.key;
    expect(key).toMatch(/^sh\u0000\d+$/);
    expect(identities.get(pid)?.found).toBeUndefined();
    shell.stdin!.end("go\n");
    const after = await until(
      async () => {
        const scan = await scanProcesses(proc, { pids: [pid], identities });
        return scan.processes.length > 0 ? scan : undefined;
      },
      `pid ${pid} to exec into agy`,
      { ms: 20_000, everyMs: 50 },
    );
    expect(after.processes.map((p) => [p.pid, p.kind, p.executable])).toEqual([[pid, "agy", agyBinary]]);
    // The new comm makes a new identity; the start time is the same process's.
    expect(identities.get(pid)?.key).toBe(`agy\u0000${key!.split("\u0000")[1]}`);
  } finally {
    shell.kill("SIGKILL");
    cache.remove();
  }
});

it("scans the same processes and parents whether it reads each stat synchronously or through the thread pool", async () => {
  const cache = tempCache();
  const agyBinary = sleepNamedAgy(cache.dir);
  const agy = spawn(agyBinary, ["600"], { stdio: "ignore" });
  const proc = createProcSource("/proc");
  const { readNow, ...rest } = proc;
  expect(readNow).toBeTypeOf("function");
  const asyncOnly = { ...rest, root: proc.root };
  try {
    const pid = agy.pid!;
    const [sync, threaded] = [await scanProcesses(proc, { pids: [pid, process.pid] }), await scanProcesses(asyncOnly, { pids: [pid, process.pid] })];
    expect(sync.processes.map((p) => [p.pid, p.kind, p.ppid])).toEqual([[pid, "agy", process.pid]]);
    expect(threaded.processes).toEqual(sync.processes);
    // The tree is every visible pid's; both saw this process's parent and the agy's.
    for (const scan of [sync, threaded]) {
      expect(scan.parents.get(pid)).toBe(process.pid);
      expect(scan.parents.get(process.pid)).toBe(process.ppid);
    }
  } finally {
    agy.kill("SIGKILL");
    cache.remove();
  }
});

it("reads anew only the conversations of servers the caller admits, and passes the others on as the full pass saw them", async () => {
  const cache = tempCache();
  const a = await startSimAsAgy(cache.dir, "tok-watch-in");
  const b = await startSimAsAgy(cache.dir, "tok-watch-out");
  const watch = createDiscoveryWatch({ pids: [a.info.agyPid, b.info.agyPid], ...NO_TMUX, admits: (s) => s.pid === a.info.agyPid });
  const clientA = createAgyRpcClient({ baseUrl: a.info.plainUrl, csrfToken: "tok-watch-in" });
  const clientB = createAgyRpcClient({ baseUrl: b.info.plainUrl, csrfToken: "tok-watch-out" });
  try {
    await watch.refresh();
    expect(watch.counts).toEqual({ full: 1, quick: 0 });
    const newA = String((await clientA.startCascade({}))["cascadeId"]);
    const newB = String((await clientB.startCascade({}))["cascadeId"]);
    const servers = await watch.refresh();
    expect(watch.counts).toEqual({ full: 1, quick: 1 });
    const ids = (pid: number) => servers.find((s) => s.pid === pid)!.conversations.map((c) => c.conversationId);
    expect(ids(a.info.agyPid).sort()).toEqual([a.info.conversationId, newA].sort());
    // Not read: the other server's new conversation is not there until a full pass.
    expect(ids(b.info.agyPid)).toEqual([b.info.conversationId]);
    expect(ids(b.info.agyPid)).not.toContain(newB);
  } finally {
    await clientA.close();
    await clientB.close();
    await watch.close();
    await a.stop();
    await b.stop();
    cache.remove();
  }
}, 90_000);
