/**
 * The fleet as a session source (`serve --redis`): the sessions every host's
 * relay publishes to the fleet index, each labelled with its host, attached
 * as {@link RemoteSession}s whose answers, turns and interrupts go to that
 * host's command stream. The supervisor (session/supervisor.ts) keeps them in
 * step as it does this machine's.
 */
import type { FleetClient } from "./fleet-client.js";
import { createRemoteSession, type RemoteSession } from "./remote-session.js";

/** One session the fleet index lists. */
export interface FleetOffer {
  conversationId: string;
  host: string;
  /** The host's name: what a list of sessions shows for it. */
  title: string;
}

export interface FleetSessionSource {
  /** The sessions the index lists now and whose relay has not said they are gone. */
  list(): Promise<FleetOffer[]>;
  /** A conversation a list offered (or one of `host`); throws when no relay publishes it. */
  attach(offer: { conversationId: string; host?: string }): RemoteSession;
}

export interface FleetSessionSourceOptions {
  /** How long a remote session waits for a relay's result (`RemoteSessionOptions.timeoutMs`). */
  timeoutMs?: number;
}

export function createFleetSessionSource(client: FleetClient, options: FleetSessionSourceOptions = {}): FleetSessionSource {
  // The host each conversation was last listed under: attach needs it.
  const hosts = new Map<string, string>();
  return {
    async list() {
      const out: FleetOffer[] = [];
      for (const entry of await client.sessions()) {
        if (entry.state === "gone") continue;
        hosts.set(entry.conversationId, entry.host);
        out.push({ conversationId: entry.conversationId, host: entry.host, title: entry.host });
      }
      return out;
    },
    attach(offer) {
      const host = offer.host ?? hosts.get(offer.conversationId);
      if (host === undefined) throw new Error("no relay publishes it any more");
      return createRemoteSession({
        client,
        host,
        conversationId: offer.conversationId,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      });
    },
  };
}
