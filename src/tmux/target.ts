/**
 * Which tmux server and which pane. Targets are pane ids (`%N`) or exact
 * session names (`=name`), never a bare name: tmux resolves a bare `main`
 * by prefix too, so `main` could type into `main-old`.
 */
import { AgyBridgeError } from "../errors.js";
import type { TmuxSocket } from "./types.js";

/** The global tmux flags that select `socket` (`-L name`, `-S path`, or none for the default server). */
export function socketArgs(socket: TmuxSocket): string[] {
  if (socket === undefined) return [];
  if ("name" in socket) {
    if (socket.name === "" || /[/\0]/.test(socket.name)) {
      throw new AgyBridgeError("invalid_argument", "A tmux socket name (-L) must be non-empty and contain no '/'; give a path with -S instead.");
    }
    return ["-L", socket.name];
  }
  if (socket.path === "" || socket.path.includes("\0")) {
    throw new AgyBridgeError("invalid_argument", "A tmux socket path (-S) must be a non-empty path.");
  }
  return ["-S", socket.path];
}

const PANE_ID = /^%[0-9]+$/;
// tmux turns ':' and '.' in session names into '_', so an exact name never holds them.
const SESSION = /^=([^:.\s\p{Cc}]+)(?::([0-9]+)(?:\.([0-9]+))?)?$/u;

/**
 * Checks a pane target and returns the form to pass to `-t` for commands
 * that address a pane. `=name` becomes `=name:` because tmux 3.3 reads a
 * pane target without `:` as a window name and resolves `=name` to nothing.
 */
export function paneTarget(target: string): string {
  if (PANE_ID.test(target)) return target;
  const match = SESSION.exec(target);
  if (match === null) {
    throw new AgyBridgeError(
      "invalid_argument",
      `The tmux target must be a pane id like %3 or an exact session name like =main (optionally =main:0.1), not ${JSON.stringify(target.slice(0, 40))}.`,
    );
  }
  return match[2] === undefined ? `${target}:` : target;
}

/** True when `target` is a valid pane target (see {@link paneTarget}). */
export function isPaneTarget(target: string): boolean {
  return PANE_ID.test(target) || SESSION.test(target);
}
