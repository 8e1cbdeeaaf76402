/**
 * The server layer: the HTTP + SSE API over supervised sessions.
 */
export { createApiServer, type ApiServer, type ApiServerOptions } from "./http-api.js";
export {
  createSessionHub,
  type HubSession,
  type SessionDescriptor,
  type SessionHub,
  type SessionHubOptions,
  type SupervisedSession,
  type TurnOutcome,
  type TurnRefused,
} from "./session-hub.js";
export { createBearerCheck, createFailureLimiter, defaultTokenFile, loadBearerToken, type FailureLimiter, type LoadedToken } from "./bearer-token.js";
export { buildOpenApiDocument } from "./openapi.js";
export { loadApprovalPage } from "./approval-page.js";
export { cleanDeviceName, createDeviceStore, deviceFileFor, type Device, type DeviceStore } from "./device-store.js";
export { createPairingCodes, PAIRING_CODE_TTL_MS, type PairingCode, type PairingCodes } from "./pairing-codes.js";
export type { AnswerResult, InteractionAction, InterruptResult, SessionSummary, TurnResult } from "./contract.js";
export { noPaneReason, superviseSession, type SupervisedSessionOptions } from "./supervised-session.js";
export { connectionLimitsOfProcess, listeningErrorReporter, type ConnectionLimits } from "./connection-guard.js";
export { createServeSessions, type LocalSessions, type RemoteSessions, type ServeSessions, type ServeSessionsOptions } from "./serve-sessions.js";
