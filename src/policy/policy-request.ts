/**
 * What a policy decides about: one request agy made, reduced to the facts
 * rules match on, and where it came from.
 */
import type { InteractionRequest } from "../mapper/index.js";

export type FileOperationKind = "create" | "edit" | "read";

export type PolicyRequest =
  | { kind: "command"; commandLine: string }
  /** `operation` is undefined when the step does not say (only rules for any operation match). */
  | { kind: "file"; path: string; operation: FileOperationKind | undefined }
  | { kind: "question" }
  | { kind: "other"; variant: string };

/** Where the request came from; every field is optional (a rule limited by a missing one does not match). */
export interface PolicyContext {
  /** agy's workspace root, absolute. */
  workspace?: string;
  /** The user's home directory, absolute. */
  home?: string;
  conversationId?: string;
  /** The tmux pane agy runs in, e.g. `%3`. */
  pane?: string;
  /** Local time of day in minutes since midnight (the caller reads the clock). */
  minuteOfDay?: number;
  /**
   * Resolves symlinks (docs/policy.md, "Files"): given an absolute path as
   * written (`.` and `..` kept), the real path the kernel would open —
   * every existing prefix resolved, `..` applied after resolution — or
   * undefined when it cannot be resolved (a loop, a dangling link, no
   * permission, too long). The policy is pure, so the caller injects it
   * (the session's `resolveRealPath`, the CLI's `policy check`). Without
   * it, no rule approves a file request: a path not resolved is asked.
   */
  resolvePath?: (path: string) => string | undefined;
}

/**
 * The policy request for an `interaction_requested` event's request. A
 * permission for a file names the step type (`VIEW_FILE`, `WRITE_TO_FILE`,
 * …), from which the operation is read; a step type we cannot place leaves
 * it undefined.
 */
export function policyRequestOf(request: InteractionRequest, stepType: string): PolicyRequest {
  switch (request.kind) {
    case "question":
      return { kind: "question" };
    case "other":
      return { kind: "other", variant: request.variant };
    case "permission":
      if (request.variant === "filePermission" || request.action === "file") {
        return { kind: "file", path: request.target, operation: operationOf(stepType) };
      }
      return { kind: "command", commandLine: request.target };
  }
}

function operationOf(stepType: string): FileOperationKind | undefined {
  const type = stepType.toUpperCase();
  if (/VIEW|READ|LIST|GREP|FIND|SEARCH/.test(type)) return "read";
  if (/WRITE|CREATE/.test(type)) return "create";
  if (/EDIT|REPLACE|CODE_ACTION|PROPOSE/.test(type)) return "edit";
  return undefined;
}
