/**
 * Bounded waits on a {@link ConversationLog}: for the history read at
 * attach, and for an event after a cursor. Each resolves when the condition
 * holds or its bound passes — never hangs a tool call.
 */
import type { ConversationLog } from "./conversation-log.js";

/** Settles when `log` has the history read at attach, or after `ms` (a tool then answers with what is there). */
export function historyIn(log: ConversationLog, ms: number): Promise<void> {
  return until(log, () => log.historyRead, ms).then(() => undefined);
}

/** Settles true when an event after `id` satisfies `test`, false after `ms`. */
export function eventAfter(log: ConversationLog, id: number, test: (e: { type: string }) => boolean, ms: number): Promise<boolean> {
  return until(log, () => log.after(id, Number.MAX_SAFE_INTEGER).some(({ event }) => test(event)), ms);
}

function until(log: ConversationLog, holds: () => boolean, ms: number): Promise<boolean> {
  if (holds()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stop();
      resolve(false);
    }, ms);
    const stop = log.subscribe(() => {
      if (!holds()) return;
      clearTimeout(timer);
      stop();
      resolve(true);
    });
  });
}
