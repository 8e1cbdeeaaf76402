/**
 * What one API server is built from ({@link ApiServerOptions}) and what every
 * route of it shares ({@link ApiContext}).
 */
import type { FailureLimiter } from "./bearer-token.js";
import type { ConnectionLimits } from "./connection-guard.js";
import type { PushSubscriptionBody } from "./contract.js";
import type { DeviceStore } from "./device-store.js";
import type { PairingCodes } from "./pairing-codes.js";
import type { PairingRoutes } from "./pairing-routes.js";
import type { LearnedRulesApi } from "./rules-routes.js";
import type { SessionHub } from "./session-hub.js";
import type { SseStream, SseTimers } from "./sse-stream.js";

export interface ServerTimeouts {
  /** A client must send its whole header block within this (default 10 000 ms). */
  headersMs?: number;
  /** …and its whole request, body included, within this (default 30 000 ms). */
  requestMs?: number;
  /** An idle kept-alive connection is closed after this (default 5 000 ms). */
  keepAliveMs?: number;
  /** How often the two deadlines above are checked (default 1 000 ms). */
  checkIntervalMs?: number;
}

export interface ApiServerOptions {
  hub: SessionHub;
  /** The bearer token clients must present. */
  token: string;
  /** Allow this one origin cross-origin (no CORS headers otherwise). */
  cors?: string;
  /** The address the server listens on: `Host` may name it (besides loopback names). */
  boundHost?: string;
  /** More names `Host` may carry (`--allow-host`). */
  allowHosts?: readonly string[];
  /** The approval page served at `/`. */
  page: string;
  /** Paired devices: their tokens authenticate on every /v1 route but pairing codes. Without it no device can pair. */
  devices?: DeviceStore;
  /** One-time pairing codes (`POST /v1/pairing/codes`, exchanged at `POST /v1/pairing`). */
  pairing?: PairingCodes;
  /** How often a paired device's open event streams check it is still paired (default 5000 ms). */
  revocationCheckMs?: number;
  /** The page's public address for pairing links; default the origin of the request's `Host`. */
  pageUrl?: string;
  /** Web Push for the page: the VAPID public key, and where subscriptions go (`src/notify/`). Without it the push routes answer 404. */
  push?: {
    publicKey: string;
    /** `invalid_argument` (→ 422) for an endpoint push cannot use. `device`: the paired device's id, or `owner` (the bearer token). */
    subscribe(subscription: PushSubscriptionBody, device: string): Promise<{ id: string; created: boolean }>;
    /** `DELETE /v1/push/subscriptions`: false when no subscription (of this device; the owner's: any) had that endpoint. */
    unsubscribe?(endpoint: string, device: string): Promise<boolean>;
  };
  /**
   * One-time action tokens (ntfy's buttons, `src/notify/action-tokens.ts`):
   * `POST /v1/actions` with `Authorization: Bearer <action token>` answers the
   * one interaction, with the one action, the token was minted for.
   */
  actions?: { redeem(token: string): { conversationId: string; interactionId: string; action: "approve" | "deny" } | undefined };
  /** More about a session for the page: agy's working directory and tmux pane. */
  describe?: (conversationId: string) => { workspace?: string; pane?: string };
  /** Rules learned from answers (`remember`, `/v1/rules`); without it those answer 404. */
  rules?: LearnedRulesApi;
  /**
   * The workspace a learned rule is scoped to: the one the policy decides
   * with (`--workspace`, else agy's own). Without it, `describe`'s.
   */
  ruleWorkspace?: (conversationId: string) => string | undefined;
  /** The OpenAPI document served at `/v1/openapi.json`. */
  openapi: unknown;
  heartbeatMs?: number;
  limiter?: FailureLimiter;
  timers?: SseTimers;
  timeouts?: ServerTimeouts;
  connectionLimits?: ConnectionLimits;
  /** One line per request: method, path without query, status. */
  log?: (line: string) => void;
  /** How long `close()` lets clients take their last bytes before cutting them (default 2000 ms). */
  shutdownGraceMs?: number;
  /** Told about failures that became a 500 (a bug, not a client mistake). */
  onInternalError?: (error: unknown) => void;
  /**
   * Told about errors of the listening server itself, e.g. `accept` failing
   * with EMFILE; the server keeps running.
   */
  onServerError?: (error: NodeJS.ErrnoException) => void;
}

/** What every route of one server shares. */
export interface ApiContext {
  readonly options: ApiServerOptions;
  readonly limiter: FailureLimiter;
  readonly pairingRoutes: PairingRoutes;
  /** The open event streams, ended with a final comment on close. */
  readonly streams: Set<SseStream>;
  /** Set by `close`: new requests are refused with 503. */
  closing: boolean;
}
