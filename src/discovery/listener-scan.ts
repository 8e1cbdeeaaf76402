/**
 * Which loopback listeners belong to a process (spike-notes §2.3, §10.2).
 * Linux: the `socket:[inode]` links in `/proc/<pid>/fd` matched against the
 * LISTEN rows of `/proc/<pid>/net/tcp` and `tcp6`. When the fds cannot be
 * read, the host-wide loopback LISTEN table is the only source left: it is
 * bounded, limited to sockets of agy's own user when that is known (the
 * table's `uid` column is the socket owner's, proc(5)), and
 * every listener from it is marked as a guess. macOS: `lsof`.
 *
 * Who may receive agy's CSRF token follows from here (see `server-probe.ts`):
 * a listener found among the process's own fds (or by lsof) is agy's; one
 * that is merely owned by agy's uid in `net/tcp` is only "same user"; the
 * rest are guesses.
 */
import { parseLsofListen } from "./lsof-text.js";
import { parseNetTcp, parseSocketLink, type TcpListenRow } from "./proc-text.js";
import type { ProcSource } from "./proc-source.js";
import type { RunCommand } from "./run-command.js";
import type { ListenerSource } from "./types.js";

export interface CandidateListener {
  host: string;
  port: number;
  source: ListenerSource;
  /** The socket's owner uid from `net/tcp`, when the listener came from the table (not from fds). */
  uid?: number;
}

export interface Attribution {
  listeners: CandidateListener[];
  /** False when the process's fds could not be read (or lsof could not run). */
  attributed: boolean;
  /** Why not: an errno code (`EACCES`, `ENOENT`) or lsof's failure. */
  failure?: string;
}

/** The most host-wide listeners probed when a process's own cannot be attributed (spike-notes §2.4). */
export const MAX_FALLBACK_LISTENERS = 32;

/** The loopback LISTEN sockets whose inode `pid` holds as an fd. */
export async function attributeListeners(proc: ProcSource, pid: number): Promise<Attribution> {
  const fds = await proc.readdir(`${pid}/fd`);
  if (!fds.ok) return { listeners: [], attributed: false, failure: fds.code };
  const links = await Promise.all(fds.value.map((fd) => proc.readlink(`${pid}/fd/${fd}`)));
  const inodes = new Set<string>();
  for (const link of links) {
    const inode = link.ok ? parseSocketLink(link.value) : undefined;
    if (inode !== undefined) inodes.add(inode);
  }
  if (inodes.size === 0) return { listeners: [], attributed: true };
  const rows = await loopbackRows(proc, `${pid}/net`);
  const listeners = rows.filter((row) => inodes.has(row.inode)).map((row) => ({ host: row.host, port: row.port, source: "fd" as const }));
  return { listeners: uniqueSorted(listeners), attributed: true };
}

/**
 * Every loopback listener of the host's table (our namespace), lowest ports
 * first, without `exclude`d ports (other agy processes' own), only those
 * owned by `uid` when it is known (a socket of another user is not agy's),
 * at most `max`.
 */
export async function hostWideListeners(
  proc: ProcSource,
  exclude: ReadonlySet<number>,
  uid: number | undefined,
  max = MAX_FALLBACK_LISTENERS,
): Promise<{ listeners: CandidateListener[]; total: number }> {
  const rows = await loopbackRows(proc, "net");
  const kept = rows.filter((row) => !exclude.has(row.port) && (uid === undefined || row.uid === uid));
  const all = uniqueSorted(kept.map((row) => ({ host: row.host, port: row.port, source: "fallback" as const, uid: row.uid })));
  return { listeners: all.slice(0, max), total: all.length };
}

/** The owner uid of each loopback LISTEN port in the host's table (for candidates from agy's log or environment). */
export async function listenerOwners(proc: ProcSource): Promise<Map<number, number>> {
  const owners = new Map<number, number>();
  for (const row of await loopbackRows(proc, "net")) owners.set(row.port, row.uid);
  return owners;
}

/** macOS: `lsof -nP -a -p PID -iTCP -sTCP:LISTEN -F pcn` (`-a` ANDs the filters; without it -p is ignored). */
export async function lsofListeners(run: RunCommand, pid: number, timeoutMs: number): Promise<Attribution> {
  const result = await run("lsof", ["-nP", "-a", "-p", String(pid), "-iTCP", "-sTCP:LISTEN", "-F", "pcn"], { timeoutMs });
  // lsof exits 1 when it found nothing, which is an answer, not a failure.
  if (result.code === null || (result.code !== 0 && result.stdout.trim() !== "")) {
    return { listeners: [], attributed: false, failure: result.failure ?? `lsof exited ${result.code}` };
  }
  const own = parseLsofListen(result.stdout).filter((p) => p.pid === pid);
  const listeners = own.flatMap((p) => p.listeners.map((l) => ({ ...l, source: "lsof" as const })));
  return { listeners: uniqueSorted(listeners), attributed: true };
}

async function loopbackRows(proc: ProcSource, dir: string): Promise<TcpListenRow[]> {
  const [v4, v6] = await Promise.all([proc.read(`${dir}/tcp`, 8 * 1024 * 1024), proc.read(`${dir}/tcp6`, 8 * 1024 * 1024)]);
  const rows = [...(v4.ok ? parseNetTcp(v4.value, 4) : []), ...(v6.ok ? parseNetTcp(v6.value, 6) : [])];
  return rows.filter((row) => row.loopback);
}

function uniqueSorted(listeners: CandidateListener[]): CandidateListener[] {
  const seen = new Set<string>();
  const out: CandidateListener[] = [];
  for (const listener of listeners.sort((a, b) => a.port - b.port)) {
    // A dual-stack process may list one port twice (IPv4 and IPv4-mapped): probe it once.
    const key = String(listener.port);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(listener);
  }
  return out;
}
