/**
 * The RPC layer: a Connect JSON client for agy's language server, typed
 * request builders, the loopback guard and the reconnecting stream watcher.
 */
export { createAgyRpcClient } from "./client.js";
export type {
  AgyRpcClient,
  AgyRpcClientOptions,
  CallOptions,
  StreamAgentStateUpdatesInput,
  StreamCallOptions,
} from "./client.js";
export { assertLoopbackUrl, isLoopbackHost } from "./loopback.js";
export * from "./requests.js";
export { decodeDataFrame, decodeStepsResponse, decodeStreamBody } from "./response-decoding.js";
export { DEFAULT_WATCH_BACKOFF, watchAgentStateUpdates } from "./stream-watcher.js";
export type { StreamSource, WatchBackoff, WatchEvent, WatchOptions, WatchTimers } from "./stream-watcher.js";
export * from "../protocol/methods.js";
export * from "../protocol/wire-schemas.js";
export * from "../protocol/envelope.js";
