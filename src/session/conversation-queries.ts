/**
 * What a session asks agy's server about a conversation besides its steps:
 * which conversation to follow when none is named, its workspace, whether it
 * runs, and the mark that changes when a user turn lands. Each is one RPC
 * read; none changes anything on agy's side.
 */
import { AgyBridgeError } from "../errors.js";
import { asObject, asString } from "../protocol/json.js";
import { RUN_STATUS } from "../protocol/wire-names.js";
import type { AgyRpcClient } from "../rpc/client.js";
import { activityOf, isChildConversation } from "./rotation.js";

/** Without an id: the server's single root conversation, else its most recently active one. */
export async function onlyConversation(client: AgyRpcClient, url: string, signal: AbortSignal): Promise<string> {
  const answer = await client.getAllCascadeTrajectories({}, { signal });
  const roots = Object.entries(answer.trajectorySummaries ?? {}).filter(([id, s]) => !isChildConversation(id, s));
  if (roots.length === 0) {
    throw new AgyBridgeError("discovery", `The server at ${url} hosts no conversation; start one in agy or pass --conversation.`);
  }
  roots.sort((a, b) => (activityOf(b[1]) ?? 0) - (activityOf(a[1]) ?? 0));
  return roots[0]![0];
}

/** The conversation's first workspace folder as a path (GetConversationMetadata); undefined when agy names none. */
export async function conversationWorkspace(client: AgyRpcClient, conversationId: string, signal: AbortSignal): Promise<string | undefined> {
  const answer = await client.getConversationMetadata({ conversationId }, { signal });
  const workspaces = asObject(answer.metadata)?.["workspaces"];
  const first = Array.isArray(workspaces) ? asObject(workspaces[0]) : undefined;
  const uri = asString(first?.["workspaceFolderAbsoluteUri"]);
  if (uri === undefined || uri === "") return undefined;
  if (!uri.startsWith("file://")) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return undefined;
  }
}

/** True when agy's summary of the conversation says it is idle. */
export async function isIdle(client: AgyRpcClient, conversationId: string, signal: AbortSignal): Promise<boolean> {
  const answer = await client.getAllCascadeTrajectories({}, { signal });
  return asObject(answer.trajectorySummaries?.[conversationId])?.["status"] === RUN_STATUS.IDLE;
}

/** Changes when a new USER_INPUT lands: agy's `lastUserInputTime` / index for the conversation. */
export async function userInputMark(client: AgyRpcClient, conversationId: string, signal: AbortSignal): Promise<string> {
  const answer = await client.getAllCascadeTrajectories({}, { signal });
  const s = asObject(answer.trajectorySummaries?.[conversationId]);
  return `${asString(s?.["lastUserInputTime"]) ?? ""}|${String(s?.["lastUserInputStepIndex"] ?? "")}`;
}

/**
 * Waits up to `withinMs` for the user-input mark to move from `before` (a
 * typed turn landed), reading it every 50 ms; false when it did not move or
 * `signal` ended the wait. The client is asked for each read: the server may
 * move meanwhile.
 */
export async function userInputLanded(
  client: () => AgyRpcClient,
  conversationId: string,
  before: string,
  withinMs: number,
  signal: AbortSignal,
  lifetime: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!signal.aborted && Date.now() < deadline) {
    if ((await userInputMark(client(), conversationId, lifetime)) !== before) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
