/**
 * The HTTP API's contract: every request body and response body as a zod
 * schema. The router validates with these, and `openapi.ts` generates the
 * published OpenAPI document from them, so the two cannot drift.
 */
import { z } from "zod";
import { InteractionRequestedEventSchema, MapperEventSchema, WaitingForSchema } from "../mapper/index.js";
import { VerdictSchema } from "../session/verdict.js";

export const SessionSummarySchema = z.object({
  conversationId: z.string(),
  pid: z.number().int().optional(),
  status: z.enum(["running", "waiting", "idle", "failed", "unknown"]),
  pending: z.number().int().nonnegative(),
  /**
   * With status `waiting`: what the session waits for (docs/events.md, `status`): the oldest request
   * open for a person, else what the `waiting` edge said. Absent otherwise.
   */
  waitingFor: WaitingForSchema.optional(),
  title: z.string().optional(),
  /** agy's working directory (its process's cwd), when serve can read it. */
  workspace: z.string().optional(),
  /** The tmux pane agy's TUI runs in (`%N`), when known. */
  pane: z.string().optional(),
  /** The host the session's relay runs on (`serve --redis`: sessions of the fleet). */
  host: z.string().optional(),
  /** agy's version (`1.2.10`), learned without starting agy and read again after every reconnect; null when unknown. */
  agyVersion: z.string().nullable().optional(),
  /** True when the agy is agy-bridge's own simulator. */
  simulator: z.boolean().optional(),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

export const SessionsResponseSchema = z.object({ sessions: z.array(SessionSummarySchema) });

export const PendingResponseSchema = z.object({ pending: z.array(InteractionRequestedEventSchema) });

/** An answer's body: the one `Verdict` of every front door (session/verdict.ts; `scope` for permissions that offer a persistence scope). */
export const InteractionActionSchema = VerdictSchema;
export type InteractionAction = z.infer<typeof InteractionActionSchema>;

export const DeliveredSchema = z.object({ result: z.literal("delivered"), stepIndex: z.number().int().nonnegative() });
export const NotDeliveredSchema = z.object({
  /** `decided_by_policy`: serve's policy decided the request and answers it itself (docs/http-api.md). */
  result: z.enum(["already_resolved", "timed_out", "not_found", "decided_by_policy"]),
  /** The step that was found, when one was. */
  stepIndex: z.number().int().nonnegative().optional(),
  reason: z.string().optional(),
});
export const AnswerResultSchema = z.union([DeliveredSchema, NotDeliveredSchema]);
export type AnswerResult = z.infer<typeof AnswerResultSchema>;

export const TurnRequestSchema = z.object({ text: z.string().min(1).max(1_000_000) });
export const TurnResultSchema = z.object({
  result: z.enum(["delivered", "unverified", "failed"]),
  reason: z.string(),
});
export type TurnResult = z.infer<typeof TurnResultSchema>;

export const InterruptResultSchema = z.object({
  result: z.enum(["cancelled", "denied", "idle"]),
  /** With `denied`: the WAITING steps that were denied. */
  stepIndices: z.array(z.number().int().nonnegative()).optional(),
  reason: z.string().optional(),
});
export type InterruptResult = z.infer<typeof InterruptResultSchema>;

/** `POST /v1/pairing`: a one-time pairing code, exchanged for a device token. */
export const PairingRequestSchema = z.object({
  code: z.string().min(1).max(200),
  /** What to call the device in `agy-bridge devices` and in `decidedBy` (`page:<name>`). */
  name: z.string().max(200).optional(),
});
export const PairingResultSchema = z.object({
  deviceId: z.string(),
  name: z.string(),
  /** The device token: send it as `Authorization: Bearer <token>`. Shown once; only its hash is kept. */
  token: z.string(),
});

/** `POST /v1/pairing/codes` (bearer token only): a new one-time pairing link. */
export const PairingCodeSchema = z.object({
  code: z.string(),
  /** ISO 8601; the code is refused after this, and after its first use. */
  expiresAt: z.string(),
  /** The page's address with the code in its fragment (`#/pair/<code>`), which browsers never send to a server. */
  url: z.string(),
});

/** `GET /v1/push/key`: the VAPID public key the page subscribes with (`applicationServerKey`). */
export const PushKeySchema = z.object({ publicKey: z.string() });

/** `POST /v1/push/subscriptions`: `PushSubscription.toJSON()` as the browser gives it. */
export const PushSubscriptionSchema = z.object({
  endpoint: z.string().min(1).max(2048),
  expirationTime: z.number().nullable().optional(),
  keys: z.object({ p256dh: z.string().min(1).max(200), auth: z.string().min(1).max(200) }),
});
export type PushSubscriptionBody = z.infer<typeof PushSubscriptionSchema>;
export const PushSubscribedSchema = z.object({
  /** A short id of the subscription (its endpoint is a capability URL and is never echoed). */
  id: z.string(),
  /** False when the endpoint was already subscribed (its keys were replaced). */
  created: z.boolean(),
});

/**
 * RFC 9457 problem details. `result` says what kind of refusal it is, so a
 * bot can branch on it: `not_found`, `already_resolved`, `timed_out`,
 * `wrong_action`, `not_answerable`, `invalid_argument`, `interaction_pending`, `no_pane`.
 */
export const ProblemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  result: z.string().optional(),
  /** With `interaction_pending`: the interaction to answer before typing a turn. */
  interactionId: z.string().optional(),
});
export type Problem = z.infer<typeof ProblemSchema>;

export { MapperEventSchema };

/** `DELETE /v1/push/subscriptions`: forget the subscription with this endpoint. */
export const PushUnsubscribeSchema = z.object({ endpoint: z.string().min(1).max(2048) });
export const PushUnsubscribedSchema = z.object({ removed: z.boolean() });
