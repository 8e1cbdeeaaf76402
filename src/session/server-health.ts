/**
 * One reader's view of whether agy's server is still there. Transport
 * failures are counted: after `relocateAfterFailures` of them the session is
 * asked to find the server again (new ports, new token), and after
 * `goneAfterFailures` in a row, or as soon as relocating finds no server at
 * all, the server is said to be gone, once per outage. Any call that reaches
 * agy ends the outage.
 *
 * Why "gone" is its own state: a server that exited answers nothing, and
 * polling "until it is back" forever leaves a watcher looking busy.
 */
import { AgyBridgeError, RpcError } from "../errors.js";

/** What asking for the server again found. */
export type RelocateOutcome =
  /** A different server (new ports or token): read from it. */
  | "moved"
  /** The same server, or no way to look (a given URL): keep trying it. */
  | "same"
  /** No server for this conversation any more (its agy exited). */
  | "missing";

export interface ServerHealthOptions {
  /** Finds the server again. */
  relocate(): Promise<RelocateOutcome>;
  /** The server moved: the reader reopens its stream and reads again. */
  moved(): void;
  /** The server is gone; said once per outage. */
  serverGone?(): void;
  relocateAfterFailures: number;
  /** Transport failures in a row after which the server counts as gone; default 10. */
  goneAfterFailures?: number;
  /** The reader stopped: nothing more is said. */
  signal: AbortSignal;
}

export class ServerHealth {
  readonly #o: ServerHealthOptions;
  /** Failures since the last relocation (or since agy was last reached). */
  #transportFailures = 0;
  /** Failures since anything last reached agy (not reset by a relocation). */
  #failuresInRow = 0;
  #gone = false;
  #relocating = false;

  constructor(options: ServerHealthOptions) {
    this.#o = options;
  }

  /** A call reached agy: the outage, if any, is over. */
  reached(): void {
    this.#transportFailures = 0;
    this.#failuresInRow = 0;
    this.#gone = false;
  }

  /** A call failed in a way {@link isServerGone} accepts. */
  failed(): void {
    this.#failuresInRow++;
    if (this.#failuresInRow >= (this.#o.goneAfterFailures ?? 10)) this.#declareGone();
    this.#transportFailures++;
    if (this.#transportFailures < this.#o.relocateAfterFailures || this.#relocating) return;
    this.#transportFailures = 0;
    this.#relocating = true;
    void this.#o
      .relocate()
      .then((outcome) => {
        if (this.#o.signal.aborted) return;
        if (outcome === "missing") this.#declareGone();
        if (outcome === "moved") this.#o.moved();
      })
      .catch(() => undefined)
      .finally(() => (this.#relocating = false));
  }

  #declareGone(): void {
    if (this.#gone || this.#o.signal.aborted) return;
    this.#gone = true;
    this.#o.serverGone?.();
  }
}

/** The server is unreachable or refuses our token: worth finding it again. */
export function isServerGone(error: unknown): boolean {
  if (!(error instanceof AgyBridgeError)) return false;
  if (error.code === "transport") return true;
  return error instanceof RpcError && error.isUnauthenticated;
}
