/**
 * The agy language server a session talks to: bound once at attach (the URL
 * given, else discovery's `locate`), and found again after failures, when
 * agy restarted on another port or a rotated token. The RPC client is made
 * here and replaced, the old one closed, only when the server moved.
 */
import { AgyBridgeError } from "../errors.js";
import type { PaneRef, ServerBinding } from "../discovery/types.js";
import type { AgyRpcClient } from "../rpc/client.js";
import type { RelocateOutcome } from "./conversation-reader.js";
import type { AgyVersionState, AttachOptions, ClientFactory, Locate } from "./types.js";

export interface ServerLinkOptions {
  locate: Locate;
  clientFactory: ClientFactory;
  /** The session's lifetime: a relocation it ends reports `same`. */
  signal: AbortSignal;
  /** The server moved: what its binding says of agy's version. */
  moved(binding: ServerBinding): void;
}

export class ServerLink {
  readonly #o: ServerLinkOptions;
  #binding: ServerBinding | undefined;
  #client: AgyRpcClient | undefined;
  /** A URL given without a `locate` of the caller's own: there is nothing to look for. */
  #fixed = false;
  #pane: PaneRef | undefined;

  constructor(options: ServerLinkOptions) {
    this.#o = options;
  }

  get binding(): ServerBinding {
    if (this.#binding === undefined) throw new AgyBridgeError("internal", "The session is not bound to a server yet.");
    return this.#binding;
  }

  get client(): AgyRpcClient {
    if (this.#client === undefined) throw new AgyBridgeError("internal", "The session is not bound to a server yet.");
    return this.#client;
  }

  /** Binds as the attach options say: the URL given, else discovery's answer for the conversation or pane. */
  async bind(o: AttachOptions): Promise<ServerBinding> {
    this.#fixed = o.url !== undefined && o.locate === undefined;
    this.#pane = o.pane;
    this.#binding =
      o.url !== undefined
        ? { url: o.url, ...(o.csrfToken === undefined ? {} : { csrfToken: o.csrfToken }), how: "given URL" }
        : await this.#o.locate({
            ...(o.conversationId === undefined ? {} : { conversationId: o.conversationId }),
            ...(o.pane === undefined ? {} : { pane: o.pane }),
            ...(o.csrfToken === undefined ? {} : { csrfToken: o.csrfToken }),
            ...(o.signal === undefined ? {} : { signal: o.signal }),
          });
    this.#client = this.#makeClient(this.#binding);
    return this.#binding;
  }

  /** Finds the server again: `moved` when the session now talks to a different one, `missing` when none was found. */
  async relocate(conversationId: string): Promise<RelocateOutcome> {
    if (this.#fixed) return "same";
    try {
      const binding = await this.#o.locate({ conversationId, ...(this.#pane === undefined ? {} : { pane: this.#pane }), signal: this.#o.signal });
      if (binding.url === this.#binding?.url && binding.csrfToken === this.#binding.csrfToken) return "same";
      const old = this.#client;
      this.#binding = binding;
      this.#client = this.#makeClient(binding);
      void old?.close();
      this.#o.moved(binding);
      return "moved";
    } catch {
      return this.#o.signal.aborted ? "same" : "missing";
    }
  }

  async close(): Promise<void> {
    await this.#client?.close();
  }

  #makeClient(binding: ServerBinding): AgyRpcClient {
    return this.#o.clientFactory({ baseUrl: binding.url, ...(binding.csrfToken === undefined ? {} : { csrfToken: binding.csrfToken }) });
  }
}

/** What a binding (or the caller's hint, with a URL) says of agy's version. */
export function versionOfBinding(binding: ServerBinding, hint: string | null | undefined): AgyVersionState {
  const state: AgyVersionState = {
    agyVersion: binding.agyVersion ?? hint ?? null,
    agyVersionSource: binding.agyVersion !== undefined ? (binding.agyVersionSource ?? "process") : null,
    simulator: binding.simulator === true,
  };
  if (binding.pid !== undefined) state.pid = binding.pid;
  return state;
}
