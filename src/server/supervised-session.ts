/**
 * A session of this machine as the server supervises it
 * ({@link SupervisedSession}): its events, its one answer path (delivered and
 * audited once, session/respond.ts), and turns refused with a reason when
 * typing could do harm or there is no pane to type into.
 */
import type { SessionAuditor } from "../audit/index.js";
import { respond } from "../session/respond.js";
import type { AgySession } from "../session/types.js";
import type { InteractionAction } from "./contract.js";
import type { SupervisedSession, TurnOutcome } from "./session-hub.js";

export interface SupervisedSessionOptions {
  /** Whether agy runs in a tmux pane the session can type into. */
  hasPane: boolean;
  /** Without a pane: the sentence a refused turn carries ({@link noPaneReason}). */
  noPane: string;
  /** Writes the audit log: answers given here, and what the session saw answered elsewhere. */
  auditor: SessionAuditor;
}

/** Why a turn cannot be typed into agy `pid`'s TUI, and what to do about it. */
export function noPaneReason(pid: number | undefined, tmux: { socketName?: string; socketPath?: string }): string {
  const where =
    tmux.socketPath !== undefined
      ? `the tmux server -S ${tmux.socketPath}`
      : tmux.socketName !== undefined
        ? `the tmux server -L ${tmux.socketName}`
        : "tmux's default server";
  return `agy${pid === undefined ? "" : ` (pid ${pid})`} runs in no pane of ${where}, so serve cannot type a turn into its TUI; start agy inside tmux, or restart serve with -L NAME / -S PATH naming the tmux server it runs in (serve then offers only the agy in that server's panes)`;
}

export function superviseSession(session: AgySession, options: SupervisedSessionOptions): SupervisedSession {
  const { auditor } = options;
  // A background reader for the audit log: requests seen open, and answers given elsewhere (agy's TUI, another client).
  void (async () => {
    for await (const event of session.events({ history: false, background: true })) auditor.observe(event);
  })().catch(() => undefined);
  return {
    get conversationId() {
      return session.conversationId;
    },
    get agyVersion() {
      return session.agyVersion ?? null;
    },
    get simulator() {
      return session.simulator === true;
    },
    events: ({ signal }) => session.events({ signal }),
    snapshot: (signal) => session.readConversation({ signal }),
    // The one answer path: delivered, and recorded once where it is delivered.
    respond: (interactionId: string, action: InteractionAction, decidedBy = "http:default") =>
      respond(session, interactionId, action, { decidedBy, onAnswered: (record) => auditor.answered(record) }),
    async sendTurn(text): Promise<TurnOutcome> {
      if (!options.hasPane) return { result: "refused", refusal: "no_pane", reason: options.noPane };
      const result = await session.sendTurn(text);
      if (result.result !== "failed") return result;
      // The driver refuses while a step waits (Enter could answer its prompt): name the step to answer.
      const waiting = (await session.pending().catch(() => []))[0];
      if (waiting === undefined) return result;
      return {
        result: "refused",
        refusal: "interaction_pending",
        interactionId: waiting.interactionId,
        reason: `interaction ${waiting.interactionId} (step ${waiting.stepIndex}, a ${waiting.kind}) waits for an answer, and typing now could answer its prompt; answer it first, then send the turn.`,
      };
    },
    interrupt: () => session.interrupt(),
    close: () => session.close(),
  };
}
