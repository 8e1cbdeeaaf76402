/**
 * Finds agy language-server processes through `/proc` (spike-notes §2.1,
 * §10.1): executables whose basename is `agy` (the CLI serves RPC itself) or
 * `language_server*` (the IDE's server), in our network namespace — a
 * listener in another namespace is unreachable on our loopback (§10.2).
 */
import { basename } from "node:path";
import { parseCmdline, parseStatIdentity, parseStatPpid } from "./proc-text.js";
import type { ProcRead, ProcSource } from "./proc-source.js";

export type ServerKind = "agy" | "language_server";

export interface AgyProcess {
  pid: number;
  ppid?: number;
  kind: ServerKind;
  /** `/proc/<pid>/exe`, or argv[0] when the link is unreadable. */
  executable: string;
  argv: string[];
}

export interface ProcessScan {
  /** agy processes in our network namespace. */
  processes: AgyProcess[];
  /** agy processes seen in another network namespace (unreachable). */
  otherNamespace: number[];
  /** Every visible pid's parent, for walking process trees. */
  parents: ReadonlyMap<number, number>;
  /** Why the scan saw nothing at all, e.g. `ENOENT` for a missing /proc. */
  failure?: string;
}

export interface ScanOptions {
  /** Consider only these pids as agy candidates (the process tree is still read whole). */
  pids?: readonly number[];
  /**
   * What earlier scans found each pid to be, kept by a caller that scans
   * again and again (`discovery-watch.ts`): a pid whose stat identity (command
   * name and start time) is unchanged is not identified again. The scan
   * updates it and drops pids that are gone.
   */
  identities?: Map<number, ScanIdentity>;
}

/** One pid as an earlier scan identified it. */
export interface ScanIdentity {
  /** {@link parseStatIdentity} of its stat. */
  key: string;
  found: AgyProcess | undefined;
}

/** The server kind an executable path names, or undefined when it is not one. */
export function serverKindOf(path: string): ServerKind | undefined {
  const name = basename(path.replace(/ \(deleted\)$/, ""));
  if (name === "agy") return "agy";
  if (/^language_server(?:_|$)/.test(name)) return "language_server";
  return undefined;
}

/** Reads `<root>` once: the parent of every pid, then the agy candidates' exe, cmdline and network namespace. */
export async function scanProcesses(proc: ProcSource, options: ScanOptions = {}): Promise<ProcessScan> {
  const listing = await proc.readdir("");
  if (!listing.ok) return { processes: [], otherNamespace: [], parents: new Map(), failure: listing.code };
  const pids = listing.value.filter((name) => /^\d+$/.test(name)).map(Number);
  const parents = new Map<number, number>();
  const keys = new Map<number, string>();
  const note = (pid: number, stat: ProcRead<string>): void => {
    const ppid = stat.ok ? parseStatPpid(stat.value) : undefined;
    if (ppid !== undefined) parents.set(pid, ppid);
    const key = stat.ok ? parseStatIdentity(stat.value) : undefined;
    if (key !== undefined) keys.set(pid, key);
  };
  // A pid's stat never waits on anything (unlike its cmdline): read synchronously when the source can.
  const readNow = proc.readNow?.bind(proc);
  if (readNow !== undefined) for (const pid of pids) note(pid, readNow(`${pid}/stat`, 4096));
  else await Promise.all(pids.map(async (pid) => note(pid, await proc.read(`${pid}/stat`, 4096))));
  const cache = options.identities;
  if (cache !== undefined) {
    for (const pid of cache.keys()) if (!keys.has(pid)) cache.delete(pid);
  }
  const identified = async (pid: number): Promise<AgyProcess | undefined> => {
    const key = keys.get(pid);
    const known = key === undefined ? undefined : cache?.get(pid);
    if (known !== undefined && known.key === key) return known.found === undefined ? undefined : { ...known.found, argv: [...known.found.argv] };
    const found = await identify(proc, pid);
    if (key !== undefined) cache?.set(pid, { key, found: found === undefined ? undefined : { ...found, argv: [...found.argv] } });
    return found;
  };
  const wanted = options.pids === undefined ? pids : pids.filter((pid) => options.pids?.includes(pid));
  const selfNet = await proc.readlink("self/ns/net");
  const processes: AgyProcess[] = [];
  const otherNamespace: number[] = [];
  await Promise.all(
    wanted.map(async (pid) => {
      const found = await identified(pid);
      if (found === undefined) return;
      const ppid = parents.get(pid);
      if (ppid !== undefined) found.ppid = ppid;
      const net = await proc.readlink(`${pid}/ns/net`);
      // Unreadable namespaces (another user's process) are kept: the probe decides reachability.
      if (selfNet.ok && net.ok && net.value !== selfNet.value) otherNamespace.push(pid);
      else processes.push(found);
    }),
  );
  processes.sort((a, b) => a.pid - b.pid);
  otherNamespace.sort((a, b) => a - b);
  return { processes, otherNamespace, parents };
}

async function identify(proc: ProcSource, pid: number): Promise<AgyProcess | undefined> {
  const cmdline = await proc.read(`${pid}/cmdline`, 256 * 1024);
  const argv = cmdline.ok ? parseCmdline(cmdline.value) : [];
  const exe = await proc.readlink(`${pid}/exe`);
  const executable = exe.ok ? exe.value.replace(/ \(deleted\)$/, "") : argv[0];
  if (executable === undefined) return undefined;
  // argv[0] decides too: under some sandboxes exe is the loader while argv[0] is …/bin/agy.
  const kind = serverKindOf(executable) ?? (argv[0] === undefined ? undefined : serverKindOf(argv[0]));
  return kind === undefined ? undefined : { pid, kind, executable, argv };
}

/** Every descendant of `root` (breadth-first, bounded depth and count, cycle-safe). */
export function descendants(parents: ReadonlyMap<number, number>, root: number, maxDepth = 32, maxCount = 256): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  const out: number[] = [];
  const seen = new Set<number>([root]);
  let level = [root];
  for (let depth = 0; depth < maxDepth && level.length > 0 && out.length < maxCount; depth++) {
    const next: number[] = [];
    for (const pid of level) {
      for (const child of (children.get(pid) ?? []).sort((a, b) => a - b)) {
        if (seen.has(child)) continue;
        seen.add(child);
        out.push(child);
        next.push(child);
      }
    }
    level = next;
  }
  return out.slice(0, maxCount);
}

/**
 * The agy pid in a pane: the pane's own pid when it is agy (`exec agy`),
 * else the first agy among its descendants, breadth-first (spike-notes §2.2).
 */
export function agyInSubtree(parents: ReadonlyMap<number, number>, panePid: number, agyPids: ReadonlySet<number>): number | undefined {
  if (agyPids.has(panePid)) return panePid;
  return descendants(parents, panePid).find((pid) => agyPids.has(pid));
}
