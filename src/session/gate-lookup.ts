/**
 * The gate an answer is for, as the answer path needs it: read off the
 * ledger's request when the ledger still holds it, else found by reading the
 * conversation again (the newest few such finds are kept), so a long history
 * costs no second copy of its gates.
 */
import type { EventOf } from "../mapper/index.js";
import { gateIdentity } from "./gate-identity.js";
import { variantOf, type CapturedInteraction } from "./interaction-delivery.js";

/** How many gates found by re-reading the conversation are kept. */
const FOUND_KEPT = 64;

export interface GateLookupOptions {
  /** The request of an interaction the ledger holds. */
  request(interactionId: string): EventOf<"interaction_requested"> | undefined;
  /** Reads the conversation for the interaction; undefined when it is not there. */
  find(interactionId: string): Promise<CapturedInteraction | undefined>;
}

export class GateLookup {
  readonly #o: GateLookupOptions;
  readonly #found = new Map<string, CapturedInteraction>();

  constructor(options: GateLookupOptions) {
    this.#o = options;
  }

  async get(interactionId: string): Promise<CapturedInteraction | undefined> {
    const request = this.#o.request(interactionId);
    if (request !== undefined) return capturedOf(request);
    const known = this.#found.get(interactionId);
    if (known !== undefined) return known;
    const found = await this.#o.find(interactionId);
    if (found !== undefined) {
      this.#found.set(interactionId, found);
      if (this.#found.size > FOUND_KEPT) this.#found.delete(this.#found.keys().next().value as string);
    }
    return found;
  }
}

/** A gate as the answer path needs it, from its request. */
export function capturedOf(event: EventOf<"interaction_requested">): CapturedInteraction {
  return {
    interactionId: event.interactionId,
    conversationId: event.conversationId,
    trajectoryId: event.trajectoryId,
    stepIndex: event.stepIndex,
    kind: event.request.kind,
    variant: variantOf(event.request),
    identity: gateIdentity(event.request),
  };
}
