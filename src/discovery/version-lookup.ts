/**
 * A session's look at which agy it talks to, again and again (at attach and
 * after every reconnect, since a self-update restarts agy): the process that
 * holds the session's listener (`/proc` only, no RPC), else the banner in
 * its tmux pane. Never starts an agy binary (agy-version.ts says why), never
 * throws: "unknown" is an answer.
 */
import { parseEnviron } from "./proc-text.js";
import { createProcSource, type ProcSource } from "./proc-source.js";
import { attributeListeners } from "./listener-scan.js";
import { descendants, scanProcesses } from "./process-scan.js";
import { socketArgs, tmuxPaneTarget } from "./pane-lookup.js";
import { spawnCommand, type RunCommand } from "./run-command.js";
import { UNKNOWN_VERSION, versionFromBanner, versionOfProcess, type AgyVersionInfo } from "./agy-version.js";
import type { PaneRef } from "./types.js";

export interface VersionQuery {
  /** The agy pid, when the caller knows it (a binding from discovery). */
  pid?: number;
  /** The listener's URL: its port leads to the process holding it when no pid is given. */
  url?: string;
  /** agy's tmux pane: its banner is read when the process names no version. */
  pane?: PaneRef;
}

export interface VersionLookupOptions {
  proc?: ProcSource;
  run?: RunCommand;
  /** Per tmux run; default 5000 ms. */
  commandTimeoutMs?: number;
  /** Scrollback rows searched for the banner; default 5000. */
  scrollbackRows?: number;
  signal?: AbortSignal;
}

/** What a lookup found: the version, its source, the agy pid it read and whether that is agy-bridge's simulator. */
export interface VersionLookup extends AgyVersionInfo {
  pid?: number;
  simulator: boolean;
}

const MAX_CHILDREN_READ = 64;

/** The version of the agy behind `query`, from its process, else its pane's banner; unknown when neither says. */
export async function lookUpAgyVersion(query: VersionQuery, options: VersionLookupOptions = {}): Promise<VersionLookup> {
  const proc = options.proc ?? createProcSource();
  let found: VersionLookup = { ...UNKNOWN_VERSION, simulator: false };
  try {
    const scan = await scanProcesses(proc, query.pid === undefined ? {} : { pids: [query.pid] });
    const pid =
      query.pid ??
      (await holderOf(
        proc,
        scan.processes.map((p) => p.pid),
        portOf(query.url),
      ));
    const agy = pid === undefined ? undefined : scan.processes.find((p) => p.pid === pid);
    if (agy !== undefined) {
      const own = await proc.read(`${agy.pid}/environ`, 256 * 1024);
      const children = descendants(scan.parents, agy.pid, 4, MAX_CHILDREN_READ);
      const envs = await Promise.all(children.map(async (child) => ({ pid: child, text: await proc.read(`${child}/environ`, 256 * 1024) })));
      found = {
        ...versionOfProcess({
          ...(own.ok ? { ownEnv: parseEnviron(own.value) } : {}),
          childEnvs: envs.flatMap((e) => (e.text.ok ? [{ pid: e.pid, env: parseEnviron(e.text.value) }] : [])),
          executable: agy.executable,
        }),
        pid: agy.pid,
      };
    }
  } catch {
    // /proc could not be read: the pane may still say.
  }
  if (found.agyVersion !== null || query.pane === undefined) return found;
  const banner = await paneBannerVersion(query.pane, options);
  return banner === undefined
    ? found
    : { ...found, agyVersion: banner, agyVersionSource: "screen", agyVersionDetail: `the banner in tmux pane ${query.pane.target}` };
}

/**
 * The version in the last banner of a pane's screen and scrollback
 * (`capture-pane -p -J -S -N`: a read, no key is sent); undefined when tmux
 * cannot say or no banner is there.
 */
export async function paneBannerVersion(pane: PaneRef, options: VersionLookupOptions = {}): Promise<string | undefined> {
  const run = options.run ?? spawnCommand;
  const rows = options.scrollbackRows ?? 5000;
  const result = await run("tmux", [...socketArgs(pane), "capture-pane", "-p", "-J", "-S", `-${rows}`, "-t", tmuxPaneTarget(pane)], {
    timeoutMs: options.commandTimeoutMs ?? 5_000,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return result.code === 0 ? versionFromBanner(result.stdout) : undefined;
}

function portOf(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  try {
    const port = Number(new URL(url).port);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** The agy pid among `pids` whose own fds hold a listener on `port`. */
async function holderOf(proc: ProcSource, pids: readonly number[], port: number | undefined): Promise<number | undefined> {
  if (port === undefined) return undefined;
  const held = await Promise.all(pids.map(async (pid) => ({ pid, attribution: await attributeListeners(proc, pid) })));
  return held.find((h) => h.attribution.listeners.some((l) => l.port === port))?.pid;
}
