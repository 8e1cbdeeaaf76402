/**
 * The failure of choosing a language server. Callers branch on `reason`
 * (nothing runs vs. ambiguous vs. refused) and show `candidates`, which carry
 * pids and ports only: never a token.
 */
import { AgyBridgeError, type AgyBridgeErrorOptions } from "../errors.js";

export type DiscoveryFailure =
  /** No agy process, or none with a usable listener. */
  | "no_server"
  /** Several servers fit and nothing given picks one. */
  | "ambiguous"
  /** The conversation or pane asked for is not served by any server found. */
  | "not_found"
  /** Two servers claim the same conversation, or tokens conflict: refused rather than guessed. */
  | "conflict"
  /** tmux could not say which process runs in the pane. */
  | "pane";

/** One server as an error lists it. */
export interface DiscoveryCandidate {
  pid: number;
  ports: number[];
  url?: string;
}

export class DiscoveryError extends AgyBridgeError {
  override name = "DiscoveryError";
  readonly reason: DiscoveryFailure;
  readonly candidates: readonly DiscoveryCandidate[];

  constructor(reason: DiscoveryFailure, message: string, candidates: readonly DiscoveryCandidate[] = [], options: AgyBridgeErrorOptions = {}) {
    super("discovery", message, options);
    this.reason = reason;
    this.candidates = candidates;
  }
}

/** `pid 123 (ports 52548, 52549)` for each candidate, for messages. */
export function describeCandidates(candidates: readonly DiscoveryCandidate[]): string {
  return candidates
    .map((c) => `pid ${c.pid} (${c.ports.length === 0 ? "no listener" : `port${c.ports.length === 1 ? "" : "s"} ${c.ports.join(", ")}`})`)
    .join("; ");
}
