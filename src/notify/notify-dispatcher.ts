/**
 * Decides when a person is told: an interaction that needs a person is
 * noticed once (not again when a session is re-attached and its history
 * replayed), its resolution is told only to channels that were told it was
 * pending, and history that is already over is never announced.
 *
 * With a policy, the policy answers first: an interaction is noticed only
 * when the verdict the session wrote on the request is `ask`. One it
 * approved or denied is never noticed, also when its delivery failed (the
 * verdict stands: docs/policy.md). Without one, every open interaction is
 * noticed as it appears (after `history_end` for what was open at attach).
 *
 * The escalation (`--escalate-after`): if nobody answered within the delay,
 * either the person is told again, or the interaction is denied with an
 * instruction — announced in the first notice either way.
 */
import type { MapperEvent } from "../mapper/index.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";
import type { AnswerInteraction, InteractionRequested, Notifier, PendingNotice } from "./notice.js";
import { deepLink } from "./notice.js";

export interface Escalation {
  afterMs: number;
  /** `notify` (default): tell the person again, each `afterMs`, up to `maxReminders`; `deny`: deny it. */
  action: "notify" | "deny";
  instruction?: string;
  /** Reminders before it goes quiet (default 3). */
  maxReminders?: number;
}

export interface NotifyDispatcherOptions {
  notifiers: readonly Notifier[];
  /** serve's page address, for deep links. */
  pageUrl: string;
  host: string;
  /** True when a policy runs: only a request whose verdict is `ask` is a person's. */
  policy: boolean;
  escalation?: Escalation;
  /** How an escalation denies (through serve's hub). */
  answer?: AnswerInteraction;
  /** Told about a failed escalation, one sentence. */
  onProblem?: (message: string) => void;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export interface SessionObserver {
  observe(event: MapperEvent): void;
}

export interface NotifyDispatcher {
  /** One per attach of a conversation: feed it the session's events from the first. */
  session(conversationId: string): SessionObserver;
  close(): Promise<void>;
}

interface Noticed {
  event: InteractionRequested;
  timer?: unknown;
  reminders: number;
}

/** "5m", "90s", "1h30m" from milliseconds. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  return [h > 0 ? `${h}h` : "", m > 0 ? `${m}m` : "", rest > 0 || s === 0 ? `${rest}s` : ""].join("");
}

/** Parses `90s`, `5m`, `1h`, `1h30m`, or plain milliseconds; undefined when it is none of those. */
export function parseDuration(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (match === null || text === "") return undefined;
  return (Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0)) * 1000;
}

export function createNotifyDispatcher(options: NotifyDispatcherOptions): NotifyDispatcher {
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout));
  const noticed = new Map<string, Noticed>();
  // Resolved before the policy's ask arrived, or told already: never noticed (again).
  const finished = new Set<string>();
  const escalation = options.escalation;
  let closed = false;

  const announcement = (event: InteractionRequested): string | undefined => {
    if (escalation === undefined) return undefined;
    const after = formatDuration(escalation.afterMs);
    if (escalation.action === "deny" && event.request.kind === "permission") {
      const said =
        escalation.instruction === undefined
          ? undefined
          : escalation.instruction.length > 200
            ? `${escalation.instruction.slice(0, 199)}…`
            : escalation.instruction;
      return `If nobody answers within ${after}, agy-bridge denies it${said === undefined ? "" : ` ("${said}")`}.`;
    }
    return `If nobody answers within ${after}, you will be reminded.`;
  };

  function tell(entry: Noticed, escalated: boolean): void {
    const { event } = entry;
    const notice: PendingNotice = {
      conversationId: event.conversationId,
      interactionId: event.interactionId,
      request: event.request,
      url: deepLink(options.pageUrl, event.interactionId),
      host: options.host,
      escalated,
    };
    const said = announcement(event);
    if (said !== undefined) notice.escalation = said;
    for (const notifier of options.notifiers) notifier.pending(notice);
  }

  function arm(entry: Noticed): void {
    if (escalation === undefined || closed) return;
    entry.timer = setTimer(() => void escalate(entry), escalation.afterMs);
  }

  async function escalate(entry: Noticed): Promise<void> {
    entry.timer = undefined;
    if (escalation === undefined || closed || noticed.get(entry.event.interactionId) !== entry) return;
    const { event } = entry;
    if (escalation.action === "deny" && event.request.kind === "permission" && options.answer !== undefined) {
      try {
        const outcome = await options.answer(
          event.conversationId,
          event.interactionId,
          { action: "deny", ...(escalation.instruction === undefined ? {} : { instruction: escalation.instruction }) },
          "escalation",
        );
        if (outcome.result === "delivered" || outcome.result === "already_resolved") return;
        options.onProblem?.(
          `the escalation could not deny interaction ${event.interactionId} (${outcome.result}${outcome.reason === undefined ? "" : `: ${outcome.reason}`})`,
        );
      } catch (error) {
        options.onProblem?.(`the escalation could not deny interaction ${event.interactionId}: ${error instanceof Error ? error.message : String(error)}`);
      }
      return;
    }
    if (entry.reminders >= (escalation.maxReminders ?? 3)) return;
    entry.reminders += 1;
    tell(entry, true);
    arm(entry);
  }

  function notice(event: InteractionRequested): void {
    if (closed || noticed.has(event.interactionId) || finished.has(event.interactionId)) return;
    const entry: Noticed = { event, reminders: 0 };
    noticed.set(event.interactionId, entry);
    tell(entry, false);
    arm(entry);
  }

  function resolved(event: Extract<MapperEvent, { type: "interaction_resolved" }>): void {
    finished.add(event.interactionId);
    const entry = noticed.get(event.interactionId);
    if (entry === undefined) return;
    noticed.delete(event.interactionId);
    if (entry.timer !== undefined) clearTimer(entry.timer);
    const { request, conversationId, interactionId } = entry.event;
    const out = { conversationId, interactionId, request, url: deepLink(options.pageUrl, interactionId), host: options.host, outcome: event.outcome };
    for (const notifier of options.notifiers) notifier.resolved(event.decidedBy === undefined ? out : { ...out, decidedBy: event.decidedBy });
  }

  // A person is told of a request no policy runs for, or one whose verdict (written on it before it was
  // published) is ask.
  const asked = (event: InteractionRequested) => !options.policy || event.policy?.decision === "ask";

  return {
    session() {
      let live = false;
      // What the history left open, folded by the interaction ledger; told at history_end.
      const history = createInteractionLedger();
      return {
        observe(event) {
          if (event.type === "interaction_requested") {
            // The session's policy approved or denied it: nobody is told it waits.
            if (event.policy !== undefined && event.policy.decision !== "ask") return;
            if (live) {
              if (asked(event)) notice(event);
            } else history.apply(event);
          } else if (event.type === "interaction_resolved") {
            if (!live) history.apply(event);
            // A replayed resolution of something never noticed only marks it done.
            resolved(event);
          } else if (event.type === "history_end" && !live) {
            live = true;
            for (const waiting of history.open()) if (asked(waiting)) notice(waiting);
          }
        },
      };
    },
    async close() {
      closed = true;
      for (const entry of noticed.values()) if (entry.timer !== undefined) clearTimer(entry.timer);
      await Promise.allSettled(options.notifiers.map((n) => n.close()));
    },
  };
}
