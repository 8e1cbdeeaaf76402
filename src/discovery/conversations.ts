/**
 * The conversations a server hosts, read from its `GetAllCascadeTrajectories`
 * answer (spike-notes §3.11). Pure.
 */
import { asIndex, asObject, asString } from "../protocol/json.js";
import type { AllTrajectoriesResponse } from "../protocol/wire-schemas.js";
import type { DiscoveredConversation } from "./types.js";

/** One entry per trajectory summary, most recent user input first. */
export function conversationsOf(response: AllTrajectoriesResponse): DiscoveredConversation[] {
  const out: Array<DiscoveredConversation & { recency: string }> = [];
  for (const [conversationId, summary] of Object.entries(response.trajectorySummaries ?? {})) {
    const conversation: DiscoveredConversation & { recency: string } = { conversationId, waitingSteps: [], recency: "" };
    const status = asString(summary.status);
    if (status !== undefined) conversation.status = status;
    const steps = asIndex(summary.stepCount);
    // stepCount is omitted at zero (proto-JSON defaults, spike-notes §1.2).
    conversation.stepCount = steps ?? 0;
    const lastInput = asString(summary.lastUserInputTime);
    if (lastInput !== undefined) conversation.lastUserInputTime = lastInput;
    const title = asString(summary["summary"]);
    if (title !== undefined && title !== "") conversation.title = title;
    // A WAITING entry without stepIndex is step 0 (zero values are omitted).
    conversation.waitingSteps = (summary.waitingSteps ?? []).map((w) => asIndex(w.stepIndex) ?? 0).sort((a, b) => a - b);
    const metadata = asObject(summary["trajectoryMetadata"]);
    const parent = asString(metadata?.["parentConversationId"]);
    const root = asString(metadata?.["rootConversationId"]);
    if (parent !== undefined && parent !== "") conversation.parentConversationId = parent;
    else if (root !== undefined && root !== "" && root !== conversationId) conversation.parentConversationId = root;
    conversation.recency = lastInput ?? asString(summary.lastModifiedTime) ?? asString(summary["createdTime"]) ?? "";
    out.push(conversation);
  }
  out.sort((a, b) => (a.recency === b.recency ? 0 : a.recency > b.recency ? -1 : 1));
  return out.map(({ recency: _recency, ...conversation }) => conversation);
}
