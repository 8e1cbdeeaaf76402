/**
 * Which agy a command that offers many sessions (`serve`, `mcp`, `acp`,
 * `relay`) offers, from its `-L NAME` / `-S PATH`: with a tmux server named,
 * only an agy running in a pane of that server (an attended session the
 * command can type into); without one, every agy discovery finds, matched to
 * panes of tmux's default server. One rule, so `-L` means the same for every
 * command.
 *
 * The rule reads `DiscoveredServer.tmuxPane`, which discovery fills from the
 * panes of the tmux servers it was given: discovery must be run with
 * {@link TmuxScope.discoveryServers} (only the named server), or a pane found
 * on another server would count.
 */
import { socketArgs, type TmuxServerRef } from "./pane-lookup.js";
import type { DiscoveredServer } from "./types.js";

/** Whether `server` is in the scope of the tmux server `scope` names (every agy when `scope` is undefined). */
export function inTmuxScope(server: Pick<DiscoveredServer, "pid" | "tmuxPane">, scope: TmuxServerRef | undefined): boolean {
  return scope === undefined || server.tmuxPane !== undefined;
}

/** `the tmux server -L work`, `the tmux server -S /tmp/s`, or `tmux's default server`. */
export function tmuxServerLabel(server: TmuxServerRef | undefined): string {
  const args = server === undefined ? [] : socketArgs(server);
  return args.length === 0 ? "tmux's default server" : `the tmux server ${args.join(" ")}`;
}

/** The sentence for an agy left out of a scope: what was skipped, why, and what to do. */
export function outOfScopeMessage(server: Pick<DiscoveredServer, "pid">, scope: TmuxServerRef): string {
  const where = tmuxServerLabel(scope);
  return `left out agy (pid ${server.pid}): it runs in no pane of ${where}, and -L/-S offer only agy in that server's panes; start it in a pane of ${where}, or leave out -L/-S to offer every agy on this machine`;
}

export interface TmuxScope {
  /** The tmux server named by -L/-S; undefined offers every agy. */
  readonly server: TmuxServerRef | undefined;
  /** The tmux servers discovery matches panes on (`DiscoverOptions.tmuxServers`): the named one, else the default. */
  readonly discoveryServers: readonly TmuxServerRef[];
  /** The tmux server a discovered pane is on, for `PaneRef` (`{}`: the default server). */
  readonly paneServer: TmuxServerRef;
  /** Whether one server is in scope, reporting nothing (for `DiscoveryWatchOptions.admits`). */
  covers(server: Pick<DiscoveredServer, "pid" | "tmuxPane">): boolean;
  /**
   * The servers in scope, in order. Each agy left out is reported once
   * through `onSkipped`, and again only after it was in scope or gone in
   * between (a pid reused by another agy is a new report).
   */
  admit<S extends Pick<DiscoveredServer, "pid" | "tmuxPane">>(servers: readonly S[]): S[];
}

export interface TmuxScopeOptions {
  /** Hears {@link outOfScopeMessage} for each agy left out, once. */
  onSkipped?: (message: string) => void;
}

/** The scope of `-L`/`-S` (`server`), remembering what it already reported. */
export function createTmuxScope(server: TmuxServerRef | undefined, options: TmuxScopeOptions = {}): TmuxScope {
  const reported = new Set<number>();
  return {
    server,
    discoveryServers: [server ?? {}],
    paneServer: server ?? {},
    covers: (candidate) => inTmuxScope(candidate, server),
    admit(servers) {
      const out: (typeof servers)[number][] = [];
      const skipped = new Set<number>();
      for (const candidate of servers) {
        if (inTmuxScope(candidate, server)) {
          out.push(candidate);
          continue;
        }
        skipped.add(candidate.pid);
        if (server !== undefined && !reported.has(candidate.pid)) options.onSkipped?.(outOfScopeMessage(candidate, server));
      }
      reported.clear();
      for (const pid of skipped) reported.add(pid);
      return out;
    },
  };
}
