/**
 * The language-server methods agy-bridge speaks. agy serves them with
 * connect-go under one service; every call is an HTTP POST to
 * `/<service>/<method>` (agy 1.0.10, live).
 */

export const SERVICE_NAME = "exa.language_server_pb.LanguageServerService";

export type MethodKind = "unary" | "server_stream";

/**
 * Which default deadline applies: discovery probes are short, functional calls
 * long (a busy agy can take over 2 s), streams have none (they idle between
 * turns).
 */
export type TimeoutClass = "probe" | "functional" | "stream";

export interface MethodInfo {
  readonly name: string;
  readonly kind: MethodKind;
  readonly timeoutClass: TimeoutClass;
}

function unary(name: string, timeoutClass: TimeoutClass = "functional"): MethodInfo {
  return { name, kind: "unary", timeoutClass };
}

export const METHODS = {
  Heartbeat: unary("Heartbeat", "probe"),
  GetConversationMetadata: unary("GetConversationMetadata", "probe"),
  GetCascadeTrajectorySteps: unary("GetCascadeTrajectorySteps"),
  GetCascadeTrajectory: unary("GetCascadeTrajectory"),
  StreamAgentStateUpdates: {
    name: "StreamAgentStateUpdates",
    kind: "server_stream",
    timeoutClass: "stream",
  },
  HandleCascadeUserInteraction: unary("HandleCascadeUserInteraction"),
  CancelCascadeSteps: unary("CancelCascadeSteps"),
  CancelCascadeInvocation: unary("CancelCascadeInvocation"),
  ForceStopCascadeTree: unary("ForceStopCascadeTree"),
  GetAllCascadeTrajectories: unary("GetAllCascadeTrajectories"),
  GetAvailableModels: unary("GetAvailableModels"),
  StartCascade: unary("StartCascade"),
  SendUserCascadeMessage: unary("SendUserCascadeMessage"),
} as const satisfies Record<string, MethodInfo>;

export type MethodName = keyof typeof METHODS;

/** URL path of a method, e.g. `/exa.language_server_pb.LanguageServerService/Heartbeat`. */
export function methodPath(method: MethodName): string {
  return `/${SERVICE_NAME}/${method}`;
}

/** Default deadlines in milliseconds (values from the reference harness, agy 1.0.x). */
export const DEFAULT_TIMEOUTS_MS: Readonly<Record<TimeoutClass, number>> = {
  probe: 2_000,
  functional: 30_000,
  stream: 0,
};
