/**
 * This machine's sessions, built the one way `serve`, `mcp` and `relay` read
 * them: the discovery watch cut to the `-L`/`-S` scope, under the local
 * session source (local-session-source.ts).
 */
import { createDiscoveryWatch } from "../discovery/discovery-watch.js";
import { createTmuxScope } from "../discovery/tmux-scope.js";
import { createLocalSessionSource, type LocalSessionSource } from "./local-session-source.js";
import type { AgySession, AttachOptions } from "./types.js";

export interface MachineSessionsOptions {
  /** `-L`/`-S`: only agy in a pane of that tmux server is offered; `undefined` for every agy of this user. */
  tmux: { socketName?: string; socketPath?: string } | undefined;
  /** Told once of each agy left out by the scope. */
  onSkipped: (message: string) => void;
  /** `AgySession.attach`, or a stand-in. */
  attach: (options: AttachOptions) => Promise<AgySession>;
  /** Whether a pid still runs, so a session a refresh missed is kept; default: none is kept. */
  alive?: (pid: number) => boolean;
}

/**
 * This machine's sessions as every long-running door reads them: the
 * discovery watch (full discovery only when agy processes come or go, and
 * every 30 s; otherwise one conversations read per server), cut to the
 * `-L`/`-S` scope.
 */
export function createMachineSessionSource(options: MachineSessionsOptions): LocalSessionSource {
  const scope = createTmuxScope(options.tmux, { onSkipped: options.onSkipped });
  return createLocalSessionSource({
    scope,
    discovery: createDiscoveryWatch({ tmuxServers: scope.discoveryServers, admits: scope.covers }),
    attach: options.attach,
    ...(options.alive === undefined ? {} : { alive: options.alive }),
  });
}
