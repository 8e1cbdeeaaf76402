/**
 * tmux panes as discovery needs them: the pid a pane runs
 * (`display-message -p -t TARGET '#{pane_pid}'`, spike-notes §2.2, §6.1),
 * every pane of a server (`list-panes -a`), and the reverse — the pane an
 * agy pid runs in (`findAgyPane`), so a person answering a gate need not
 * name the pane. Spawned with an argv, never a shell. The tmux driver has no
 * pane-pid call, so discovery asks tmux itself.
 */
import { readdir } from "node:fs/promises";
import { userInfo } from "node:os";
import { join } from "node:path";
import { createProcSource, type ProcSource } from "./proc-source.js";
import { parseEnviron, parseStatPpid } from "./proc-text.js";
import { spawnCommand, type RunCommand } from "./run-command.js";
import type { PaneRef } from "./types.js";

/** A tmux server: `-L name`, `-S path`, or the default (both absent). */
export interface TmuxServerRef {
  socketName?: string;
  socketPath?: string;
}

export interface PaneProcess {
  paneId: string;
  pid: number;
}

/** `-L name` / `-S path` arguments for a server. */
export function socketArgs(server: TmuxServerRef): string[] {
  if (server.socketPath !== undefined) return ["-S", server.socketPath];
  if (server.socketName !== undefined) return ["-L", server.socketName];
  return [];
}

/** `%3 on -L work`: how messages name a pane. */
export function paneLabel(pane: PaneRef): string {
  const socket = socketArgs(pane);
  return socket.length === 0 ? pane.target : `${pane.target} on ${socket.join(" ")}`;
}

/** The pid running in `pane`, or why tmux could not say. */
/**
 * `pane.target` as tmux needs it for a pane command: an exact session name
 * (`=name`) only resolves with the window part spelled (`=name:`); tmux 3.3
 * finds nothing for the bare form.
 */
export function tmuxPaneTarget(pane: PaneRef): string {
  return pane.target.startsWith("=") && !pane.target.includes(":") ? `${pane.target}:` : pane.target;
}

export async function panePid(run: RunCommand, pane: PaneRef, timeoutMs: number): Promise<{ pid: number } | { failure: string }> {
  const target = tmuxPaneTarget(pane);
  const result = await run("tmux", [...socketArgs(pane), "display-message", "-p", "-t", target, "#{pane_pid}"], { timeoutMs });
  if (result.code === null) return { failure: `tmux could not run (${result.failure ?? "unknown"})` };
  if (result.code !== 0) return { failure: `tmux found no pane ${paneLabel(pane)} (${result.stderr.trim() || `exit ${result.code}`})` };
  const text = result.stdout.trim();
  if (text === "") return { failure: `tmux found no pane ${paneLabel(pane)}` };
  return /^\d+$/.test(text) ? { pid: Number(text) } : { failure: `tmux answered ${JSON.stringify(text.slice(0, 40))} instead of a pane pid` };
}

/** Every pane of a server with its pid; `[]` when the server is not running. */
export async function listPanes(run: RunCommand, server: TmuxServerRef, timeoutMs: number): Promise<PaneProcess[]> {
  const result = await run("tmux", [...socketArgs(server), "list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"], { timeoutMs });
  return result.code === 0 ? parsePaneList(result.stdout) : [];
}

/** `%3 1234` lines → panes; other lines are skipped. */
export function parsePaneList(text: string): PaneProcess[] {
  const out: PaneProcess[] = [];
  for (const line of text.split("\n")) {
    const match = /^(%\d+) (\d+)$/.exec(line.trim());
    if (match !== null) out.push({ paneId: match[1] as string, pid: Number(match[2]) });
  }
  return out;
}

export interface FindPaneOptions {
  /** Where `/proc` is read (default the real one). */
  proc?: ProcSource;
  /** Runs tmux (argv, never a shell); default `spawnCommand`. */
  run?: RunCommand;
  /**
   * The user's tmux socket directory, whose sockets are searched besides the
   * default server; default `${TMUX_TMPDIR or /tmp}/tmux-<uid>` (tmux's own
   * rule, with TMUX_TMPDIR as the agy process sees it).
   */
  tmuxDir?: string;
  /** Per tmux run; default 5000 ms. */
  commandTimeoutMs?: number;
}

/** Ancestors walked at most: a pane's shell, a launcher, node, … never this deep. */
const MAX_ANCESTORS = 64;

/**
 * The tmux pane whose process tree holds `pid` (the agy that owns a
 * conversation), searched on the tmux server named in the process's own
 * `TMUX` variable, every socket in the user's tmux directory and the default
 * server; undefined when none holds it. Never throws for what it could not
 * read: "not found" is a finding.
 */
export async function findAgyPane(pid: number, options: FindPaneOptions = {}): Promise<PaneRef | undefined> {
  const proc = options.proc ?? createProcSource("/proc");
  const run = options.run ?? spawnCommand;
  const timeoutMs = options.commandTimeoutMs ?? 5_000;
  const [chain, environ] = await Promise.all([ancestorsOf(proc, pid), proc.read(`${pid}/environ`, 256 * 1024)]);
  const env = environ.ok ? parseEnviron(environ.value) : new Map<string, string>();
  const servers = await candidateServers(env, options.tmuxDir);
  const lists = await Promise.all(servers.map(async (server) => ({ server, panes: await listPanes(run, server, timeoutMs) })));
  // The innermost pane wins: a tmux started inside another pane's shell holds the agy more closely.
  for (const ancestor of chain) {
    for (const { server, panes } of lists) {
      const pane = panes.find((p) => p.pid === ancestor);
      if (pane !== undefined) return { target: pane.paneId, ...server };
    }
  }
  return undefined;
}

/** `pid`, its parent, its parent's parent … (as far as /proc shows). */
async function ancestorsOf(proc: ProcSource, pid: number): Promise<number[]> {
  const chain = [pid];
  let current = pid;
  while (chain.length < MAX_ANCESTORS) {
    const stat = await proc.read(`${current}/stat`, 4096);
    const parent = stat.ok ? parseStatPpid(stat.value) : undefined;
    if (parent === undefined || parent <= 1 || chain.includes(parent)) break;
    chain.push(parent);
    current = parent;
  }
  return chain;
}

/** The servers to search: the one in `TMUX` (its socket path precedes the first comma), each socket of the tmux directory, the default. */
async function candidateServers(env: ReadonlyMap<string, string>, given: string | undefined): Promise<TmuxServerRef[]> {
  const paths: string[] = [];
  const fromTmux = env.get("TMUX")?.split(",")[0];
  if (fromTmux !== undefined && fromTmux.startsWith("/")) paths.push(fromTmux);
  const dir = given ?? join(env.get("TMUX_TMPDIR") || "/tmp", `tmux-${userInfo().uid}`);
  const entries = await readdir(dir).catch(() => [] as string[]);
  for (const name of entries.sort()) paths.push(join(dir, name));
  const unique = [...new Set(paths)];
  // The default server's socket is `<dir>/default`; ask it by name only when the directory did not list it.
  const out: TmuxServerRef[] = unique.map((socketPath) => ({ socketPath }));
  if (!unique.includes(join(dir, "default"))) out.push({});
  return out;
}
