/**
 * The session's default effects, loaded on first use: a session given a URL
 * never pays for discovery, one without a pane never for tmux.
 */
import type { PaneRef, ServerBinding, ServerQuery } from "../discovery/types.js";
import type { TurnDriver } from "./types.js";

/** Discovery's `findServer`. */
export async function defaultLocate(query: ServerQuery): Promise<ServerBinding> {
  const { findServer } = await import("../discovery/index.js");
  return findServer(query);
}

/** Discovery's `findAgyPane`: the pane whose process tree holds the agy pid. */
export async function defaultLocatePane(pid: number): Promise<PaneRef | undefined> {
  const { findAgyPane } = await import("../discovery/index.js");
  return findAgyPane(pid);
}

/** The tmux driver behind the session's `TurnDriver`: one driver per tmux server. */
export async function defaultTurnDriver(): Promise<TurnDriver> {
  const { createTmuxDriver } = await import("../tmux/index.js");
  const drivers = new Map<string, ReturnType<typeof createTmuxDriver>>();
  const driverFor = (pane: PaneRef) => {
    const socket = pane.socketPath !== undefined ? { path: pane.socketPath } : pane.socketName !== undefined ? { name: pane.socketName } : undefined;
    const key = JSON.stringify(socket ?? null);
    let driver = drivers.get(key);
    if (driver === undefined) {
      driver = createTmuxDriver(socket === undefined ? {} : { socket });
      drivers.set(key, driver);
    }
    return driver;
  };
  return {
    deliverTurn: (pane, text, options) => driverFor(pane).deliverTurn(pane.target, text, options),
    closePrompt: (pane, options) => driverFor(pane).closePrompt(pane.target, options),
    answerPrompt: (pane, choice, options) => driverFor(pane).answerPrompt(pane.target, choice, options),
    readScreen: (pane, options) => driverFor(pane).readPane(pane.target, options),
  };
}
