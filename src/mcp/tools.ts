/**
 * The tools (docs/mcp.md): each validates its input with a zod schema,
 * answers with `structuredContent` and the same JSON as text, and turns every
 * refusal into a tool error whose text is a sentence the agent can act on.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { currentWaitingFor, type WaitingFor } from "../mapper/index.js";
import type { InteractionRequested } from "./conversation-log.js";
import type { z } from "zod";
import { answerAsAgent, type AgentRules } from "./agent-answers.js";
import { eventAfter, historyIn } from "./log-waits.js";
import { McpToolError, toolErrorText } from "./mcp-error.js";
import type { PooledSession, SessionPool } from "./session-pool.js";
import {
  AnswerInput,
  AnswerOutput,
  ApproveInput,
  DEFAULT_EVENTS,
  DEFAULT_WAIT_MS,
  DenyInput,
  InterruptInput,
  InterruptOutput,
  ListSessionsInput,
  ListSessionsOutput,
  ReadEventsInput,
  ReadEventsOutput,
  ScreenInput,
  ScreenOutput,
  SendTurnInput,
  SendTurnOutput,
  WaitForInput,
  WaitForOutput,
} from "./tool-schemas.js";
import { waitFor } from "./wait-for.js";

export interface ToolContext {
  pool: SessionPool;
  rules: AgentRules;
  /** `mcp:<client name>`, read when a decision is made (the client names itself at initialize). */
  decidedBy(): string;
  /** Default 2000 ms. */
  progressIntervalMs?: number;
  /** How long a tool waits for a freshly attached conversation's history (default 30 s). */
  historyTimeoutMs?: number;
  /** How long send_turn waits for the turn to show in the events (default 10 s). */
  turnShowsMs?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

type Result = { content: Array<{ type: "text"; text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

function ok(structured: Record<string, unknown>): Result {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool error result: MCP's way to tell the model what went wrong without failing the request (no structured content: clients check it against the output schema). */
function failed(error: unknown): Result {
  return { content: [{ type: "text", text: toolErrorText(error) }], isError: true };
}

interface ToolConfig<I extends z.ZodType, O extends z.ZodObject> {
  title: string;
  description: string;
  input: I;
  output: O;
  readOnly?: boolean;
  destructive?: boolean;
}

/** What each tool is built from: the context, the pool, and the one way to register a tool. */
interface Toolkit {
  context: ToolContext;
  pool: SessionPool;
  /** The session of `conversationId` (or the default), once its history is in the log. */
  entryFor(conversationId: string | undefined): Promise<PooledSession>;
  /** Registers a tool whose answer is its structured output, and whose every failure is a tool error. */
  register<I extends z.ZodType, O extends z.ZodObject>(
    name: string,
    config: ToolConfig<I, O>,
    run: (input: z.output<I>, extra: Extra) => Promise<z.output<O>>,
  ): void;
}

export function registerTools(server: McpServer, context: ToolContext): void {
  const tools = toolkit(server, context);
  // In this order in `tools/list`.
  listSessionsTool(tools);
  readEventsTool(tools);
  waitForTool(tools);
  sendTurnTool(tools);
  approveAndDenyTools(tools);
  answerTool(tools);
  interruptTool(tools);
  screenTool(tools);
}

function toolkit(server: McpServer, context: ToolContext): Toolkit {
  const { pool } = context;
  const historyMs = context.historyTimeoutMs ?? 30_000;
  const entryFor = async (conversationId: string | undefined): Promise<PooledSession> => {
    const entry = await pool.get(conversationId);
    await historyIn(entry.log, historyMs);
    return entry;
  };
  const register = <I extends z.ZodType, O extends z.ZodObject>(
    name: string,
    config: ToolConfig<I, O>,
    run: (input: z.output<I>, extra: Extra) => Promise<z.output<O>>,
  ) => {
    server.registerTool(
      name,
      {
        title: config.title,
        description: config.description,
        inputSchema: config.input,
        outputSchema: config.output,
        annotations: { readOnlyHint: config.readOnly ?? false, destructiveHint: config.destructive ?? false, openWorldHint: false },
      },
      (async (input: z.output<I>, extra: Extra) => {
        try {
          return ok((await run(input, extra)) as Record<string, unknown>);
        } catch (error) {
          return failed(error);
        }
      }) as never,
    );
  };
  return { context, pool, entryFor, register };
}

function listSessionsTool(tools: Toolkit): void {
  const { pool, register } = tools;
  register(
    "list_sessions",
    {
      title: "List agy sessions",
      description: "The attended agy conversations on this machine, with their status and how many interactions wait.",
      input: ListSessionsInput,
      output: ListSessionsOutput,
      readOnly: true,
    },
    async () => {
      await pool.refresh();
      // The conversation named at start is listed even when discovery does not list it.
      await pool.get(undefined).catch(() => undefined);
      return {
        sessions: pool.list().map((e) => ({
          conversationId: e.conversationId,
          ...(e.descriptor.pid === undefined ? {} : { pid: e.descriptor.pid }),
          ...(e.descriptor.title === undefined ? {} : { title: e.descriptor.title }),
          status: e.log.status(),
          ...waitingForField(e.log.waitingFor()),
          pending: e.log.pending().length,
          default: e.isDefault,
          agyVersion: e.session.agyVersion ?? null,
          ...(e.session.simulator === true ? { simulator: true } : {}),
        })),
      };
    },
  );
}

function readEventsTool(tools: Toolkit): void {
  const { entryFor, register } = tools;
  register(
    "read_events",
    {
      title: "Read a conversation's events",
      description: "The conversation's events (docs/events.md) after a cursor, oldest first, and the cursor for the next call.",
      input: ReadEventsInput,
      output: ReadEventsOutput,
      readOnly: true,
    },
    async (input) => {
      const entry = await entryFor(input.conversationId);
      const since = input.since === undefined ? 0 : Number(input.since);
      if (since > entry.log.lastId)
        throw new McpToolError(
          `since ${input.since} is past the end of conversation ${entry.conversationId} (its newest cursor is ${entry.log.lastId}); use a cursor this conversation's read_events returned.`,
        );
      const limit = input.limit ?? DEFAULT_EVENTS;
      const page = entry.log.after(since, limit + 1);
      const events = page.slice(0, limit);
      return {
        conversationId: entry.conversationId,
        events: events.map(({ id, event }) => ({ cursor: String(id), event })),
        cursor: String(events.at(-1)?.id ?? since),
        more: page.length > limit,
      };
    },
  );
}

function waitForTool(tools: Toolkit): void {
  const { context, entryFor, register } = tools;
  register(
    "wait_for",
    {
      title: "Wait for agy",
      description:
        'Waits until the turn is idle, an interaction is pending, or an event of a type arrives; returns at once when that already holds, or "timed_out". Sends progress notifications while it waits.',
      input: WaitForInput,
      output: WaitForOutput,
      readOnly: true,
    },
    async (input, extra) => {
      const entry = await entryFor(input.conversationId);
      const since = input.since === undefined ? undefined : Number(input.since);
      if (since !== undefined && since > entry.log.lastId)
        throw new McpToolError(
          `since ${input.since} is past the end of conversation ${entry.conversationId} (its newest cursor is ${entry.log.lastId}); use a cursor this conversation returned.`,
        );
      const token = extra._meta?.progressToken;
      const outcome = await waitFor(
        entry.log,
        { until: input.until, eventType: input.eventType, timeoutMs: input.timeoutMs ?? DEFAULT_WAIT_MS, since },
        {
          now: () => performance.now(),
          setTimer(ms, fn) {
            const timer = setTimeout(fn, ms);
            return () => clearTimeout(timer);
          },
          progressIntervalMs: context.progressIntervalMs ?? 2000,
          signal: extra.signal,
          ...(token === undefined
            ? {}
            : {
                progress: (progress: number, total: number, message: string) =>
                  void extra
                    .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: Math.round(progress), total, message } })
                    .catch(() => undefined),
              }),
        },
      );
      return {
        conversationId: entry.conversationId,
        outcome: outcome.outcome,
        status: outcome.status,
        // A request open now means agy waits, even when its `waiting` edge is not in the log yet.
        ...waitingForField(currentWaitingFor(outcome.pending.length > 0 ? "waiting" : outcome.status, outcome.pending, entry.log.waitingFor())),
        pending: outcome.pending.map(pendingView),
        ...(outcome.event === undefined ? {} : { event: outcome.event }),
        cursor: String(outcome.cursor),
        waitedMs: Math.round(outcome.waitedMs),
      };
    },
  );
}

function sendTurnTool(tools: Toolkit): void {
  const { context, entryFor, register } = tools;
  register(
    "send_turn",
    {
      title: "Send a user turn",
      description: "Types a user turn into agy's TUI (refused while agy waits on a prompt or a person has a draft). Returns the cursor before the turn.",
      input: SendTurnInput,
      output: SendTurnOutput,
    },
    async (input, extra) => {
      const entry = await entryFor(input.conversationId);
      if (input.text.trimStart().startsWith("/"))
        throw new McpToolError("A turn starting with / is a slash command; agents may not send those (a person can, in agy's TUI). Rephrase the turn.");
      const before = entry.log.lastId;
      const result = await entry.session.sendTurn(input.text, { signal: extra.signal });
      if (result.result === "failed") throw new McpToolError(`The turn was not typed: ${result.reason.replace(/\.$/, "")}.`);
      // Wait until the turn shows in the events, so an immediate wait_for "idle" waits for this turn's end.
      if (result.result === "delivered")
        await eventAfter(entry.log, before, (e) => e.type === "user_message" || e.type === "status", context.turnShowsMs ?? 10_000);
      return { conversationId: entry.conversationId, result: result.result, reason: result.reason, cursor: String(before) };
    },
  );
}

function approveAndDenyTools(tools: Toolkit): void {
  const { context, entryFor, register } = tools;
  const decision =
    (kind: "approve" | "deny") => async (input: { conversationId?: string | undefined; interactionId: string; instruction?: string | undefined }) => {
      const entry = await entryFor(input.conversationId);
      if (kind === "approve" && entry.log.request(input.interactionId)?.request.kind === "question") {
        throw new McpToolError(`Interaction ${input.interactionId} is a question; answer it with answer (options or writeIn), or decline it with deny.`);
      }
      const answer = await answerAsAgent(
        entry,
        input.interactionId,
        { kind, ...(input.instruction === undefined ? {} : { instruction: input.instruction }) },
        context.decidedBy(),
        context.rules,
      );
      return { conversationId: entry.conversationId, interactionId: input.interactionId, ...answer };
    };
  register(
    "approve",
    {
      title: "Approve a pending permission",
      description: "Allows the pending permission (a command, a file access). Refused when the team's policy denies it.",
      input: ApproveInput,
      output: AnswerOutput,
      destructive: true,
    },
    decision("approve"),
  );
  register(
    "deny",
    {
      title: "Deny a pending interaction",
      description: "Refuses the pending permission (with an instruction for the model), or declines a question.",
      input: DenyInput,
      output: AnswerOutput,
    },
    decision("deny"),
  );
}

function answerTool(tools: Toolkit): void {
  const { context, entryFor, register } = tools;
  register(
    "answer",
    {
      title: "Answer a pending question",
      description: "Answers the pending question with the chosen options (labels or ids) and/or free text.",
      input: AnswerInput,
      output: AnswerOutput,
      destructive: true,
    },
    async (input) => {
      const entry = await entryFor(input.conversationId);
      const request = entry.log.request(input.interactionId);
      if (request !== undefined && request.request.kind !== "question") {
        throw new McpToolError(`Interaction ${input.interactionId} is a ${request.request.kind} request, not a question; use approve or deny.`);
      }
      const optionIds = (input.options ?? []).map((chosen) => optionId(chosen, request));
      const answer = await answerAsAgent(
        entry,
        input.interactionId,
        { kind: "answer", optionIds, ...(input.writeIn === undefined ? {} : { writeIn: input.writeIn }) },
        context.decidedBy(),
        context.rules,
      );
      return { conversationId: entry.conversationId, interactionId: input.interactionId, ...answer };
    },
  );
}

function interruptTool(tools: Toolkit): void {
  const { context, entryFor, register } = tools;
  register(
    "interrupt",
    {
      title: "Interrupt agy",
      description: "Stops the current work: cancels a running turn, or denies what waits.",
      input: InterruptInput,
      output: InterruptOutput,
      destructive: true,
    },
    async (input) => {
      const entry = await entryFor(input.conversationId);
      const waiting = await entry.session.pending();
      if (waiting.length === 0) return { conversationId: entry.conversationId, ...(await entry.session.interrupt()) };
      // A parked gate ignores a cancel: deny each, as the agent's own audited decision (spike-notes §3.6, §5.8).
      const stepIndices: number[] = [];
      for (const p of waiting) {
        const denied = await answerAsAgent(entry, p.interactionId, { kind: "deny" }, context.decidedBy(), context.rules).catch(() => undefined);
        if (denied !== undefined) stepIndices.push(denied.stepIndex);
      }
      return { conversationId: entry.conversationId, result: "denied" as const, stepIndices };
    },
  );
}

function screenTool(tools: Toolkit): void {
  const { pool, register } = tools;
  register(
    "screen",
    {
      title: "Read agy's screen",
      description: "agy's TUI pane read as the screen model of `agy-bridge screen`: ready, busy, prompt or unknown, with the prompt's options.",
      input: ScreenInput,
      output: ScreenOutput,
      readOnly: true,
    },
    async (input, extra) => {
      const entry = await pool.get(input.conversationId);
      const screen = await entry.session.screen({ signal: extra.signal });
      return { conversationId: entry.conversationId, screen: { ...screen } };
    },
  );
}

/** The interaction as tools show it: the request event without its type. */
export function pendingView(event: {
  interactionId: string;
  stepIndex: number;
  stepType: string;
  trajectoryId: string;
  callId: string;
  request: { kind: string };
}) {
  return {
    interactionId: event.interactionId,
    stepIndex: event.stepIndex,
    stepType: event.stepType,
    trajectoryId: event.trajectoryId,
    callId: event.callId,
    request: event.request,
  };
}

/** An option given by id ("2") or label ("Yes"), checked against the question when it is known. */
function optionId(chosen: string, request: InteractionRequested | undefined): string {
  const question = request?.request.kind === "question" ? request.request.questions[0] : undefined;
  if (question === undefined) return chosen;
  const byId = question.options.find((o) => o.id === chosen);
  if (byId !== undefined) return byId.id;
  const byLabel = question.options.filter((o) => o.text.trim().toLowerCase() === chosen.trim().toLowerCase());
  if (byLabel.length === 1) return byLabel[0]!.id;
  const choices = question.options.map((o) => `${o.id} (${JSON.stringify(o.text)})`).join(", ");
  throw new McpToolError(`${JSON.stringify(chosen.slice(0, 100))} is not an option of this question; choose by id or label among ${choices}.`);
}

/** `{ waitingFor }` when the conversation waits, else nothing (the field is optional). */
function waitingForField(waitingFor: WaitingFor | undefined): { waitingFor?: WaitingFor } {
  return waitingFor === undefined ? {} : { waitingFor };
}
