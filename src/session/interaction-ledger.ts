/**
 * The interaction ledger: a pure fold of the mapper's event stream into the
 * state of every interaction — which requests are open (in request order),
 * each request by id, its resolution, who decided it and the policy's verdict.
 * No clock and no I/O: what it knows comes in the events. Every front door
 * reads this instead of keeping its own pending map (docs/session.md).
 */
import type { EventOf, MapperEvent } from "../mapper/index.js";

/** An open request as the doors list it: the `interaction_requested` event itself. */
export type OpenRequest = EventOf<"interaction_requested">;

/** What the ledger knows of one interaction. */
export interface LedgerEntry {
  interactionId: string;
  /**
   * The request; undefined only for a resolution that arrived with no request
   * seen (a stream joined late): the entry is then resolved from the start.
   */
  request: OpenRequest | undefined;
  state: "open" | "resolved";
  /**
   * The session policy's verdict, when one decided (copied from the request),
   * and, for an approve or deny, what delivering it came to (`policy_delivered`).
   */
  policy?: {
    decision: "approve" | "deny" | "ask";
    rule: string | null;
    delivery?: { result: EventOf<"policy_delivered">["result"]; reason?: string };
  };
  resolution?: EventOf<"interaction_resolved">;
  /** Who answered, from the resolution's `decidedBy` when it names one. */
  decidedBy?: string;
}

/** What one applied event changed; undefined when it changed nothing. */
export type LedgerChange = { kind: "opened"; entry: LedgerEntry } | { kind: "resolved"; entry: LedgerEntry } | { kind: "delivered"; entry: LedgerEntry };

/** A copy of the ledger's state at one moment (its entries are copies; the events are the ones published). */
export interface LedgerSnapshot {
  /** Open requests a person may answer (no policy, or the policy said `ask`), in request order. */
  open: OpenRequest[];
  /** Every open request, including those the policy approved or denied and will deliver itself. */
  openAll: OpenRequest[];
  /** The retained entries, oldest first. */
  entries: LedgerEntry[];
}

/** The ledger: feed it events with `apply`, read it with the rest. */
export interface InteractionLedger {
  /** Folds one event in; returns what changed, undefined for an event that changes nothing. Never throws. */
  apply(event: MapperEvent): LedgerChange | undefined;
  /** Open requests a person may answer, in request order. */
  open(): OpenRequest[];
  /** Every open request, including policy-decided ones still open, in request order. */
  openAll(): OpenRequest[];
  get(interactionId: string): LedgerEntry | undefined;
  /** The retained entries, oldest first: every open one and at most `retain` resolved ones. */
  entries(): LedgerEntry[];
  /** How many entries are retained. */
  readonly size: number;
  snapshot(): LedgerSnapshot;
}

export interface InteractionLedgerOptions {
  /** How many resolved entries to keep (oldest dropped first); open ones are never dropped. Default 1000. */
  retain?: number;
}

const DEFAULT_RETAIN = 1000;

/** True when a person may answer the request: no policy, or the policy said `ask` (docs/policy.md). */
export function personMayAnswer(request: OpenRequest): boolean {
  return request.policy === undefined || request.policy.decision === "ask";
}

/** Creates an empty ledger. */
export function createInteractionLedger(options: InteractionLedgerOptions = {}): InteractionLedger {
  const retain = Math.max(0, Math.floor(options.retain ?? DEFAULT_RETAIN));
  // Insertion order is request (or first-seen) order: a Map keeps it.
  const byId = new Map<string, LedgerEntry>();
  // Resolved ids, oldest resolution first, for the bound.
  const resolvedOrder = new Set<string>();

  const trim = () => {
    while (resolvedOrder.size > retain) {
      const oldest = resolvedOrder.values().next().value as string;
      resolvedOrder.delete(oldest);
      byId.delete(oldest);
    }
  };

  const request = (event: OpenRequest): LedgerChange | undefined => {
    // A replay (history, re-attach) of what is known changes nothing: an open one stays where it is, a resolved one stays resolved.
    if (byId.has(event.interactionId)) return undefined;
    const entry: LedgerEntry = { interactionId: event.interactionId, request: event, state: "open" };
    if (event.policy !== undefined) entry.policy = { decision: event.policy.decision, rule: event.policy.rule };
    byId.set(event.interactionId, entry);
    return { kind: "opened", entry };
  };

  const resolve = (event: EventOf<"interaction_resolved">): LedgerChange | undefined => {
    const known = byId.get(event.interactionId);
    if (known?.state === "resolved") return undefined;
    const entry: LedgerEntry = known ?? { interactionId: event.interactionId, request: undefined, state: "resolved" };
    entry.state = "resolved";
    entry.resolution = event;
    if (event.decidedBy !== undefined) entry.decidedBy = event.decidedBy;
    byId.set(event.interactionId, entry);
    resolvedOrder.add(event.interactionId);
    trim();
    return { kind: "resolved", entry };
  };

  // The policy's delivery: after its request, and before or after the resolution it causes. Once per interaction.
  const delivered = (event: EventOf<"policy_delivered">): LedgerChange | undefined => {
    const entry = byId.get(event.interactionId);
    if (entry?.policy === undefined || entry.policy.delivery !== undefined) return undefined;
    entry.policy = { ...entry.policy, delivery: { result: event.result, ...(event.reason === undefined ? {} : { reason: event.reason }) } };
    return { kind: "delivered", entry };
  };

  const openWhere = (test: (r: OpenRequest) => boolean) => {
    const out: OpenRequest[] = [];
    for (const entry of byId.values()) if (entry.state === "open" && entry.request !== undefined && test(entry.request)) out.push(entry.request);
    return out;
  };

  const ledger: InteractionLedger = {
    apply(event) {
      if (typeof event !== "object" || event === null || typeof (event as { interactionId?: unknown }).interactionId !== "string") return undefined;
      if (event.type === "interaction_requested") return request(event);
      if (event.type === "interaction_resolved") return resolve(event);
      if (event.type === "policy_delivered") return delivered(event);
      return undefined;
    },
    open: () => openWhere(personMayAnswer),
    openAll: () => openWhere(() => true),
    get: (interactionId) => byId.get(interactionId),
    entries: () => [...byId.values()],
    get size() {
      return byId.size;
    },
    // Entries change as their interaction does: the snapshot holds copies of them.
    snapshot: () => ({ open: ledger.open(), openAll: ledger.openAll(), entries: ledger.entries().map((entry) => ({ ...entry })) }),
  };
  return ledger;
}
