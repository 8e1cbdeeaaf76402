/**
 * One ACP session: an editor joined to an attended agy conversation. It
 * pumps the conversation's events to the editor as `session/update`s, types
 * the editor's prompts into agy's TUI and ends each with the stop reason
 * agy's turn gives, turns agy's gates and questions into permission
 * requests (after the policy, when there is one), and withdraws a request
 * the person answered in the TUI first.
 */
import { RequestError, type AgentContext, type PromptResponse, type SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionAuditor } from "../audit/index.js";
import type { EventOf, MapperEvent } from "../mapper/index.js";
import type { AgySessionApi } from "../session/index.js";
import { askGate } from "./gate-dialog.js";
import type { PolicyGate } from "./policy-gate.js";
import { createTurn, stopReasonOf, turnKey, type Turn } from "./turn.js";
import { createUpdateMapper } from "./update-mapper.js";

type Requested = EventOf<"interaction_requested">;

/** agy's token totals for the conversation (running totals, as the mapper reports them). */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  thinkingOutputTokens: number;
  cacheReadTokens: number;
}

export interface AcpSessionOptions {
  sessionId: string;
  agy: AgySessionApi;
  client: AgentContext;
  /** `acp:<client name>`: who decided, on every answer this session delivers. */
  decidedBy: string;
  /** The client takes form elicitations: questions are asked as forms. */
  forms?: boolean | undefined;
  policyGate?: PolicyGate | undefined;
  auditor?: SessionAuditor | undefined;
  /** How long a request waits for the policy's decision before the editor is asked (ms); default 10,000. */
  policyWaitMs?: number | undefined;
  /** How long a cancelled prompt waits for agy's turn to stop before it answers `cancelled` anyway (ms); default 15,000. */
  cancelWaitMs?: number | undefined;
  onProblem?: ((message: string) => void) | undefined;
}

export interface AcpSession {
  readonly sessionId: string;
  /** Starts following; resolves once the history (replayed as updates when `history`) has been sent. */
  start(history: boolean): Promise<void>;
  /** Types the prompt into agy's TUI and resolves when agy's turn ends. */
  prompt(text: string): Promise<PromptResponse>;
  /** The editor's `session/cancel`: interrupts agy's turn (cancel while generating, deny while waiting). */
  cancel(): Promise<void>;
  usage(): UsageTotals | undefined;
  close(): Promise<void>;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one of the functions over 100 lines that #35 splits; listed so no new one is added
export function createAcpSession(options: AcpSessionOptions): AcpSession {
  const { sessionId, agy, client } = options;
  const problem = options.onProblem ?? (() => undefined);
  const stop = new AbortController();
  const mapper = createUpdateMapper();
  const open = new Map<string, AbortController>();
  let turn: Turn | undefined;
  /** A prompt cancelled while it was being typed: if agy takes it anyway, it is interrupted as it starts. */
  let orphan: { key: string; until: number } | undefined;
  let totals: UsageTotals | undefined;
  let queue: Promise<void> = Promise.resolve();

  // Notifications go out in order, and every one is out before the prompt's answer.
  const send = (updates: SessionUpdate[]) => {
    for (const update of updates) {
      queue = queue
        .then(() => client.notify("session/update", { sessionId, update }))
        .catch((error: unknown) => {
          problem(`an update could not be sent to the editor (${(error as Error).message})`);
        });
    }
  };

  const gate = async (event: Requested) => {
    // A resynchronised stream may show an open request again: one request per interaction.
    if (open.has(event.interactionId)) return;
    const abort = new AbortController();
    open.set(event.interactionId, abort);
    try {
      // The session's policy decided it before publishing it: the editor is never asked.
      if (event.policy !== undefined && event.policy.decision !== "ask") return;
      if (options.policyGate !== undefined) {
        const wait = AbortSignal.any([abort.signal, stop.signal, AbortSignal.timeout(options.policyWaitMs ?? 10_000)]);
        if ((await options.policyGate.verdict(event.interactionId, wait)) === "decided") return;
      }
      if (abort.signal.aborted || stop.signal.aborted) return;
      await askGate({
        sessionId,
        client,
        agy,
        event,
        title: mapper.titleOf(event.callId),
        decidedBy: options.decidedBy,
        auditor: options.auditor,
        forms: options.forms,
        signal: abort.signal,
      });
    } catch (error) {
      if (!abort.signal.aborted && !stop.signal.aborted) problem(`interaction ${event.interactionId}: ${(error as Error).message}`);
    } finally {
      open.delete(event.interactionId);
    }
  };

  const onLive = (event: MapperEvent) => {
    options.auditor?.observe(event);
    switch (event.type) {
      case "user_message":
        if (turn !== undefined && !turn.started && turnKey(event.text) === turn.key) {
          // The editor's own prompt: it has it already.
          turn.started = true;
          return;
        }
        if (orphan !== undefined && orphan.key === turnKey(event.text) && Date.now() < orphan.until) {
          orphan = undefined;
          void interrupt();
          return;
        }
        break;
      case "interaction_requested":
        send(mapper.announceGate(event));
        void gate(event);
        return;
      case "interaction_resolved":
        open.get(event.interactionId)?.abort();
        return;
      case "message": {
        const reason = stopReasonOf(event.stopReason);
        if (turn?.started === true && reason !== undefined) turn.stop = reason;
        break;
      }
      case "status":
        if (event.reason === "server_gone") {
          turn?.fail(
            new RequestError(-32603, "agy's language server is gone (agy exited or stopped answering); restart agy, then session/load this session again."),
          );
        } else if (turn?.started === true && (event.status === "idle" || event.reason === "turn_failed")) {
          const ending = turn;
          void queue.then(() => ending.finish(ending.cancelled ? "cancelled" : (ending.stop ?? "end_turn")));
        }
        return;
      default:
        break;
    }
    send(mapper.map(event));
  };

  const interrupt = async () => {
    try {
      await agy.interrupt();
    } catch (error) {
      problem(`the cancel did not reach agy (${(error as Error).message})`);
    }
  };

  const pump = async (history: boolean, ready: (error?: Error) => void) => {
    let live = false;
    const openAtStart = new Map<string, Requested>();
    try {
      for await (const event of agy.events({ history, signal: stop.signal })) {
        if (event.type === "usage")
          totals = {
            inputTokens: event.inputTokens,
            outputTokens: event.outputTokens,
            thinkingOutputTokens: event.thinkingOutputTokens,
            cacheReadTokens: event.cacheReadTokens,
          };
        if (live) {
          onLive(event);
          continue;
        }
        if (event.type === "history_end") {
          live = true;
          await queue;
          ready();
          // What still waits was asked before the editor came: ask it now.
          for (const request of openAtStart.values()) onLive(request);
          continue;
        }
        if (event.type === "interaction_requested") openAtStart.set(event.interactionId, event);
        else if (event.type === "interaction_resolved") openAtStart.delete(event.interactionId);
        else if (history) send(mapper.map(event));
      }
      ready(new Error("the conversation's events ended before its history was read"));
    } catch (error) {
      ready(error as Error);
    }
    turn?.fail(new RequestError(-32603, "agy-bridge stopped following this conversation; session/load it again."));
  };

  return {
    sessionId,
    start(history) {
      return new Promise<void>((resolve, reject) => {
        let once = false;
        void pump(history, (error) => {
          if (once) return;
          once = true;
          if (error === undefined) resolve();
          else reject(error);
        });
      });
    },
    async prompt(text) {
      if (turn !== undefined) throw RequestError.invalidRequest(undefined, "A prompt is already running in this session; wait for it or cancel it.");
      const current = createTurn(text);
      turn = current;
      try {
        const delivery = await agy.sendTurn(text, { signal: current.typing.signal }).catch((error: unknown) => {
          if (current.cancelled) return undefined;
          throw new RequestError(-32603, `agy-bridge could not type the prompt into agy: ${(error as Error).message}`);
        });
        if (delivery === undefined) return { stopReason: "cancelled" };
        if (delivery.result === "failed") {
          if (current.cancelled) return { stopReason: "cancelled" };
          // The driver refuses while a step waits (Enter could answer its prompt): name the step to answer.
          const waiting = (await agy.pending().catch(() => []))[0];
          const why =
            waiting === undefined
              ? delivery.reason
              : `${waiting.kind} ${waiting.interactionId} ("${waiting.summary}") waits for an answer, and typing now could answer it; answer it first (here or in agy's TUI), then send the prompt again.`;
          throw new RequestError(-32603, `agy did not take the prompt: ${why}`, {
            delivery: "failed",
            ...(waiting === undefined ? {} : { interactionId: waiting.interactionId }),
          });
        }
        const stopReason = await current.done;
        await queue;
        return { stopReason, _meta: { agyBridge: { delivery: delivery.result, ...(totals === undefined ? {} : { usage: { ...totals } }) } } };
      } finally {
        if (turn === current) turn = undefined;
      }
    },
    async cancel() {
      const current = turn;
      if (current === undefined || current.cancelled) return;
      current.cancelled = true;
      if (!current.started) {
        // Not agy's turn yet: stop typing; if agy takes it anyway, it is interrupted when it starts.
        current.typing.abort();
        orphan = { key: current.key, until: Date.now() + (options.cancelWaitMs ?? 15_000) };
        current.finish("cancelled");
        return;
      }
      await interrupt();
      const timer = setTimeout(() => current.finish("cancelled"), options.cancelWaitMs ?? 15_000);
      void current.done.finally(() => clearTimeout(timer)).catch(() => undefined);
    },
    usage: () => (totals === undefined ? undefined : { ...totals }),
    async close() {
      stop.abort();
      for (const abort of open.values()) abort.abort();
      turn?.fail(new RequestError(-32603, "The session was closed."));
      await agy.close();
    },
  };
}
