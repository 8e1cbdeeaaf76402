/**
 * The RPC layer: a Connect JSON client for agy's language server, the loopback
 * guard and the reconnecting stream watcher. Request bodies are built inside
 * the client; callers pass the input types below.
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
export type {
  CancelInvocationInput,
  CancelStepsInput,
  ConversationInput,
  FilePermissionAnswer,
  HandleInteractionInput,
  InteractionTarget,
  PermissionAnswer,
  QuestionAnswer,
  QuestionResponse,
  RunCommandAnswer,
  SendMessageInput,
  StartCascadeInput,
  StepsInput,
} from "./requests.js";
export { DEFAULT_WATCH_BACKOFF, watchAgentStateUpdates } from "./stream-watcher.js";
export type { StreamSource, WatchBackoff, WatchEvent, WatchOptions, WatchTimers } from "./stream-watcher.js";
