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
import { createInteractionLedger } from "../session/interaction-ledger.js";
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

/** One ACP session's state, shared by the steps below. */
interface SessionState {
  readonly options: AcpSessionOptions;
  readonly problem: (message: string) => void;
  /** Aborted on close: stops following and every open request. */
  readonly stop: AbortController;
  readonly mapper: ReturnType<typeof createUpdateMapper>;
  /** The requests asked of the editor now, each aborted when answered elsewhere. */
  readonly open: Map<string, AbortController>;
  turn: Turn | undefined;
  /** A prompt cancelled while it was being typed: if agy takes it anyway, it is interrupted as it starts. */
  orphan: { key: string; until: number } | undefined;
  totals: UsageTotals | undefined;
  /** Notifications go out in order, and every one is out before the prompt's answer. */
  queue: Promise<void>;
}

export function createAcpSession(options: AcpSessionOptions): AcpSession {
  const state: SessionState = {
    options,
    problem: options.onProblem ?? (() => undefined),
    stop: new AbortController(),
    mapper: createUpdateMapper(),
    open: new Map(),
    turn: undefined,
    orphan: undefined,
    totals: undefined,
    queue: Promise.resolve(),
  };
  return {
    sessionId: options.sessionId,
    start(history) {
      return new Promise<void>((resolve, reject) => {
        let once = false;
        void pump(state, history, (error) => {
          if (once) return;
          once = true;
          if (error === undefined) resolve();
          else reject(error);
        });
      });
    },
    prompt: (text) => prompt(state, text),
    cancel: () => cancel(state),
    usage: () => (state.totals === undefined ? undefined : { ...state.totals }),
    async close() {
      state.stop.abort();
      for (const abort of state.open.values()) abort.abort();
      state.turn?.fail(new RequestError(-32603, "The session was closed."));
      await options.agy.close();
    },
  };
}

function send(state: SessionState, updates: SessionUpdate[]): void {
  const { client, sessionId } = state.options;
  for (const update of updates) {
    state.queue = state.queue
      .then(() => client.notify("session/update", { sessionId, update }))
      .catch((error: unknown) => {
        state.problem(`an update could not be sent to the editor (${(error as Error).message})`);
      });
  }
}

/** Asks the editor about a request, unless the policy decides it first or it is answered elsewhere. */
async function gate(state: SessionState, event: Requested): Promise<void> {
  const { options, stop, open } = state;
  // A resynchronised stream may show an open request again: one request per interaction.
  if (open.has(event.interactionId)) return;
  const abort = new AbortController();
  open.set(event.interactionId, abort);
  try {
    // The session's policy decided it before publishing it (the verdict is on the request, as the
    // ledger keeps it): an approve or deny is never the editor's, an ask is at once.
    if (event.policy !== undefined && event.policy.decision !== "ask") return;
    // Only a session that writes no verdict on its requests needs the policy's report to come first.
    if (event.policy === undefined && options.policyGate !== undefined) {
      const wait = AbortSignal.any([abort.signal, stop.signal, AbortSignal.timeout(options.policyWaitMs ?? 10_000)]);
      if ((await options.policyGate.verdict(event.interactionId, wait)) === "decided") return;
    }
    if (abort.signal.aborted || stop.signal.aborted) return;
    await askGate({
      sessionId: options.sessionId,
      client: options.client,
      agy: options.agy,
      event,
      title: state.mapper.titleOf(event.callId),
      decidedBy: options.decidedBy,
      auditor: options.auditor,
      forms: options.forms,
      signal: abort.signal,
    });
  } catch (error) {
    if (!abort.signal.aborted && !stop.signal.aborted) state.problem(`interaction ${event.interactionId}: ${(error as Error).message}`);
  } finally {
    open.delete(event.interactionId);
  }
}

/** An event after the history: to the editor, to the turn it belongs to, or to a request. */
function onLive(state: SessionState, event: MapperEvent): void {
  const { turn } = state;
  state.options.auditor?.observe(event);
  switch (event.type) {
    case "user_message":
      if (turn !== undefined && !turn.started && turnKey(event.text) === turn.key) {
        // The editor's own prompt: it has it already.
        turn.started = true;
        return;
      }
      if (state.orphan !== undefined && state.orphan.key === turnKey(event.text) && Date.now() < state.orphan.until) {
        state.orphan = undefined;
        void interrupt(state);
        return;
      }
      break;
    case "interaction_requested":
      send(state, state.mapper.announceGate(event));
      void gate(state, event);
      return;
    case "interaction_resolved":
      state.open.get(event.interactionId)?.abort();
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
        void state.queue.then(() => ending.finish(ending.cancelled ? "cancelled" : (ending.stop ?? "end_turn")));
      }
      return;
    default:
      break;
  }
  send(state, state.mapper.map(event));
}

async function interrupt(state: SessionState): Promise<void> {
  try {
    await state.options.agy.interrupt();
  } catch (error) {
    state.problem(`the cancel did not reach agy (${(error as Error).message})`);
  }
}

/** Follows the conversation: the history (sent when `history`), then `ready`, then live events until it ends. */
async function pump(state: SessionState, history: boolean, ready: (error?: Error) => void): Promise<void> {
  let live = false;
  // What the history left open, folded by the interaction ledger.
  const openAtStart = createInteractionLedger();
  try {
    for await (const event of state.options.agy.events({ history, signal: state.stop.signal })) {
      if (event.type === "usage")
        state.totals = {
          inputTokens: event.inputTokens,
          outputTokens: event.outputTokens,
          thinkingOutputTokens: event.thinkingOutputTokens,
          cacheReadTokens: event.cacheReadTokens,
        };
      if (live) {
        onLive(state, event);
        continue;
      }
      if (event.type === "history_end") {
        live = true;
        await state.queue;
        ready();
        // What still waits was asked before the editor came: ask it now.
        for (const request of openAtStart.openAll()) onLive(state, request);
        continue;
      }
      if (event.type === "interaction_requested" || event.type === "interaction_resolved") openAtStart.apply(event);
      else if (history) send(state, state.mapper.map(event));
    }
    ready(new Error("the conversation's events ended before its history was read"));
  } catch (error) {
    ready(error as Error);
  }
  state.turn?.fail(new RequestError(-32603, "agy-bridge stopped following this conversation; session/load it again."));
}

/** Types the prompt and resolves with the stop reason of the turn it starts. */
async function prompt(state: SessionState, text: string): Promise<PromptResponse> {
  const { agy } = state.options;
  if (state.turn !== undefined) throw RequestError.invalidRequest(undefined, "A prompt is already running in this session; wait for it or cancel it.");
  const current = createTurn(text);
  state.turn = current;
  try {
    const delivery = await agy.sendTurn(text, { signal: current.typing.signal }).catch((error: unknown) => {
      if (current.cancelled) return undefined;
      throw new RequestError(-32603, `agy-bridge could not type the prompt into agy: ${(error as Error).message}`);
    });
    if (delivery === undefined) return { stopReason: "cancelled" };
    if (delivery.result === "failed") {
      if (current.cancelled) return { stopReason: "cancelled" };
      throw await refusedPrompt(agy, delivery.reason);
    }
    const stopReason = await current.done;
    await state.queue;
    const { totals } = state;
    return { stopReason, _meta: { agyBridge: { delivery: delivery.result, ...(totals === undefined ? {} : { usage: { ...totals } }) } } };
  } finally {
    if (state.turn === current) state.turn = undefined;
  }
}

/** The error for a prompt agy's TUI did not take; the driver refuses while a step waits (Enter could answer its prompt), so it names the step to answer. */
async function refusedPrompt(agy: AgySessionApi, reason: string): Promise<RequestError> {
  const waiting = (await agy.pending().catch(() => []))[0];
  const why =
    waiting === undefined
      ? reason
      : `${waiting.kind} ${waiting.interactionId} ("${waiting.summary}") waits for an answer, and typing now could answer it; answer it first (here or in agy's TUI), then send the prompt again.`;
  return new RequestError(-32603, `agy did not take the prompt: ${why}`, {
    delivery: "failed",
    ...(waiting === undefined ? {} : { interactionId: waiting.interactionId }),
  });
}

async function cancel(state: SessionState): Promise<void> {
  const { options } = state;
  const current = state.turn;
  if (current === undefined || current.cancelled) return;
  current.cancelled = true;
  if (!current.started) {
    // Not agy's turn yet: stop typing; if agy takes it anyway, it is interrupted when it starts.
    current.typing.abort();
    state.orphan = { key: current.key, until: Date.now() + (options.cancelWaitMs ?? 15_000) };
    current.finish("cancelled");
    return;
  }
  await interrupt(state);
  const timer = setTimeout(() => current.finish("cancelled"), options.cancelWaitMs ?? 15_000);
  void current.done.finally(() => clearTimeout(timer)).catch(() => undefined);
}
