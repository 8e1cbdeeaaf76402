/**
 * The tools' input and output schemas (zod 4, which the MCP SDK takes as it
 * is). Input names are a contract (docs/mcp.md): extend, never rename. Every
 * input object is strict, so a misspelt argument is refused with a sentence
 * rather than ignored.
 */
import { z } from "zod";
import { MapperEventSchema, type MapperEventType, WaitingForSchema } from "../mapper/index.js";

/** Every event type a conversation can carry (the `eventType` of `wait_for`). */
export const EVENT_TYPES = MapperEventSchema.options.map((o) => o.shape.type.value).filter((t) => t !== "history_end") as MapperEventType[];

/** The longest `wait_for` (ten minutes); hosts have their own request timeouts too. */
export const MAX_WAIT_MS = 600_000;
export const DEFAULT_WAIT_MS = 30_000;
export const MAX_EVENTS = 1000;
export const DEFAULT_EVENTS = 200;

function strict<S extends z.ZodRawShape>(shape: S, tool: string) {
  const names = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `${tool} takes no argument ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}; its arguments are ${names.length === 0 ? "none" : names.join(", ")}`
        : undefined,
  });
}

const conversationId = z
  .string({ error: "conversationId must be a conversation id string from list_sessions" })
  .min(1, { error: "conversationId must not be empty; leave it out for the default conversation" })
  .max(200, { error: "conversationId is too long to be an agy conversation id" })
  .optional()
  .describe("The agy conversation; default: the one agy-bridge mcp was started on, or the only one running.");

const interactionId = z
  .string({ error: "interactionId must be a string like int_…, from wait_for, read_events or the pending resource" })
  .regex(/^int_[0-9a-f]{1,64}$/, {
    error: "interactionId must look like int_ followed by hex digits, as wait_for, read_events and the pending resource give it",
  })
  .describe("The pending interaction, as wait_for / read_events / the pending resource name it (int_…).");

const cursor = z
  .string({ error: "since must be a cursor string that read_events, wait_for or send_turn returned" })
  .regex(/^\d{1,15}$/, { error: "since must be a cursor that read_events, wait_for or send_turn returned (leave it out to start from the beginning)" });

export const ListSessionsInput = strict({}, "list_sessions");

export const ReadEventsInput = strict(
  {
    conversationId,
    since: cursor.optional().describe("An opaque cursor from read_events / wait_for / send_turn; absent = from the start of the conversation."),
    limit: z
      .number({ error: `limit must be a whole number from 1 to ${MAX_EVENTS}` })
      .int({ error: `limit must be a whole number from 1 to ${MAX_EVENTS}` })
      .min(1, { error: `limit must be at least 1` })
      .max(MAX_EVENTS, { error: `limit must be at most ${MAX_EVENTS}; page with the returned cursor` })
      .optional()
      .describe(`How many events at most (default ${DEFAULT_EVENTS}, at most ${MAX_EVENTS}).`),
  },
  "read_events",
);

export const WaitForInput = strict(
  {
    conversationId,
    until: z
      .enum(["idle", "pending_interaction", "event"], { error: 'until must be "idle", "pending_interaction" or "event"' })
      .describe('"idle": the turn is over; "pending_interaction": agy waits on an approval or a question; "event": an event of eventType arrives.'),
    eventType: z
      .enum(EVENT_TYPES as [MapperEventType, ...MapperEventType[]], { error: `eventType must be one of ${EVENT_TYPES.join(", ")}` })
      .optional()
      .describe('With until "event": the event type to wait for.'),
    timeoutMs: z
      .number({ error: `timeoutMs must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}` })
      .int({ error: `timeoutMs must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}` })
      .min(0, { error: "timeoutMs must not be negative" })
      .max(MAX_WAIT_MS, { error: `timeoutMs must be at most ${MAX_WAIT_MS} (ten minutes); call wait_for again to wait longer` })
      .optional()
      .describe(`How long to wait (default ${DEFAULT_WAIT_MS} ms, at most ${MAX_WAIT_MS}).`),
    since: cursor
      .optional()
      .describe(
        'Only what happens after this cursor counts (for "idle": an idle edge after it; for "event": an event after it). Absent: the state now counts, and "event" waits for the next one.',
      ),
  },
  "wait_for",
).refine((input) => input.until !== "event" || input.eventType !== undefined, { error: 'until "event" needs an eventType, e.g. "function_call_output"' });

export const SendTurnInput = strict(
  {
    conversationId,
    text: z
      .string({ error: "text must be the turn to type, a string" })
      .min(1, { error: "text must not be empty" })
      .max(100_000, { error: "text is longer than 100000 characters; send a shorter turn" })
      .refine((t) => t.trim() !== "", { error: "text must hold more than white space" })
      .describe("The user turn to type into agy's TUI. A turn starting with / is refused (slash commands are a person's)."),
  },
  "send_turn",
);

export const ApproveInput = strict(
  {
    conversationId,
    interactionId,
    instruction: z
      .string({ error: "instruction must be a string" })
      .max(10_000, { error: "instruction is longer than 10000 characters" })
      .optional()
      .describe("Refused: agy's approval cannot carry an instruction for the model; give one with deny instead."),
  },
  "approve",
);

export const DenyInput = strict(
  {
    conversationId,
    interactionId,
    instruction: z
      .string({ error: "instruction must be a string" })
      .max(10_000, { error: "instruction is longer than 10000 characters" })
      .optional()
      .describe("What the model is told instead (newer agy builds)."),
  },
  "deny",
);

export const AnswerInput = strict(
  {
    conversationId,
    interactionId,
    options: z
      .array(z.string({ error: "each of options must be a string: an option's label or its id" }).min(1, { error: "an option must not be empty" }), {
        error: "options must be a list of the chosen options' labels or ids",
      })
      .max(50, { error: "options lists more than 50 choices" })
      .optional()
      .describe('The chosen options of the first question, by label or id ("1".."N").'),
    writeIn: z
      .string({ error: "writeIn must be a string" })
      .min(1, { error: "writeIn must not be empty" })
      .max(10_000, { error: "writeIn is longer than 10000 characters" })
      .optional()
      .describe("Free text for the first question."),
  },
  "answer",
).refine((input) => (input.options?.length ?? 0) > 0 || input.writeIn !== undefined, { error: "answer needs options (labels or ids) or writeIn" });

export const InterruptInput = strict({ conversationId }, "interrupt");
export const ScreenInput = strict({ conversationId }, "screen");

const looseEvent = z.looseObject({ type: z.string() });
const pendingInteraction = z.looseObject({
  interactionId: z.string(),
  stepIndex: z.number(),
  stepType: z.string(),
  request: z.looseObject({ kind: z.string() }),
});
const statusField = z.enum(["running", "waiting", "idle", "failed", "unknown"]);

export const ListSessionsOutput = z.object({
  sessions: z.array(
    z.object({
      conversationId: z.string(),
      pid: z.number().optional(),
      title: z.string().optional(),
      status: statusField,
      /** With status `waiting`: what the conversation waits for (docs/events.md, `status`). */
      waitingFor: WaitingForSchema.optional(),
      pending: z.number(),
      default: z.boolean(),
      /** agy's version (`1.2.10`), learned without starting agy; null when unknown. */
      agyVersion: z.string().nullable(),
      /** True for agy-bridge's own simulator. */
      simulator: z.boolean().optional(),
    }),
  ),
});

export const ReadEventsOutput = z.object({
  conversationId: z.string(),
  events: z.array(z.object({ cursor: z.string(), event: looseEvent })),
  /** Pass as `since` for what comes next. */
  cursor: z.string(),
  more: z.boolean(),
});

export const WaitForOutput = z.object({
  conversationId: z.string(),
  outcome: z.enum(["idle", "pending_interaction", "event", "failed", "timed_out"]),
  status: statusField,
  /** While agy waits (status `waiting`, or a request open): what for, the oldest open request's word. */
  waitingFor: WaitingForSchema.optional(),
  pending: z.array(pendingInteraction),
  event: looseEvent.optional(),
  cursor: z.string(),
  waitedMs: z.number(),
});

export const SendTurnOutput = z.object({
  conversationId: z.string(),
  result: z.enum(["delivered", "unverified"]),
  reason: z.string(),
  /** The log position before the turn: `since` for what the turn does. */
  cursor: z.string(),
});

export const AnswerOutput = z.object({
  conversationId: z.string(),
  interactionId: z.string(),
  result: z.literal("delivered"),
  stepIndex: z.number(),
  decidedBy: z.string(),
});

export const InterruptOutput = z.object({
  conversationId: z.string(),
  result: z.enum(["cancelled", "denied", "idle"]),
  stepIndices: z.array(z.number()).optional(),
});

export const ScreenOutput = z.object({
  conversationId: z.string(),
  screen: z.looseObject({ state: z.string() }),
});
