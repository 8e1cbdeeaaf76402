/**
 * tmux panes as discovery needs them: the pid a pane runs
 * (`display-message -p -t TARGET '#{pane_pid}'`, spike-notes §2.2, §6.1) and
 * every pane of a server (`list-panes -a`). Spawned with an argv, never a
 * shell. The tmux driver has no pane-pid call, so discovery asks tmux itself.
 */
import type { RunCommand } from "./run-command.js";
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
export async function panePid(run: RunCommand, pane: PaneRef, timeoutMs: number): Promise<{ pid: number } | { failure: string }> {
  // An exact session name (`=name`) only resolves as a pane target with the
  // window part spelled (`=name:`); tmux 3.3 prints nothing for the bare form.
  const target = pane.target.startsWith("=") && !pane.target.includes(":") ? `${pane.target}:` : pane.target;
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
