/**
 * Which attended conversation an editor's `session/new` joins: the one it
 * names in `_meta.agyBridge.conversationId`, else the one given on the
 * command line, else the one whose agy workspace is the editor's `cwd`,
 * else the only one. Anything else is an error that lists the candidates,
 * so the person can name one.
 */
import type { AcpCandidate } from "./session-source.js";

export type Choice = { chosen: string; how: string } | { error: string; candidates: AcpCandidate[] };

/** The conversation id an editor names in a request's `_meta` (`{"agyBridge": {"conversationId": …}}`). */
export function namedConversation(meta: unknown): string | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const bridge = (meta as Record<string, unknown>)["agyBridge"];
  if (typeof bridge !== "object" || bridge === null) return undefined;
  const id = (bridge as Record<string, unknown>)["conversationId"];
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** Chooses among `candidates` for an editor working in `cwd`. */
export function chooseConversation(candidates: readonly AcpCandidate[], cwd: string): Choice {
  const here = trimSlash(cwd);
  const exact = candidates.filter((c) => c.workspace !== undefined && trimSlash(c.workspace) === here);
  if (exact.length === 1) return { chosen: exact[0]!.conversationId, how: `its agy workspace is ${here}` };
  // The editor may be open on a folder inside agy's workspace: the deepest workspace holding it wins.
  const inside = candidates
    .filter((c) => c.workspace !== undefined && here.startsWith(`${trimSlash(c.workspace)}/`))
    .sort((a, b) => trimSlash(b.workspace!).length - trimSlash(a.workspace!).length);
  const deepest = inside[0];
  if (exact.length === 0 && deepest !== undefined && (inside.length === 1 || trimSlash(inside[1]!.workspace!) !== trimSlash(deepest.workspace!))) {
    return { chosen: deepest.conversationId, how: `its agy workspace ${trimSlash(deepest.workspace!)} holds ${here}` };
  }
  if (candidates.length === 1 && exact.length === 0) return { chosen: candidates[0]!.conversationId, how: "the only attended agy session" };
  const tied = exact.length > 1 ? exact : inside.length > 1 ? inside : [...candidates];
  if (tied.length === 0) {
    return { error: "No attended agy session was found: start agy in a terminal (in tmux to let the editor type turns), then try again.", candidates: [] };
  }
  const list = tied.map(describe).join("; ");
  return {
    error: `${tied.length} attended agy sessions could be meant; name one with _meta {"agyBridge": {"conversationId": "<id>"}} in session/new, or start agy-bridge acp with --conversation ID: ${list}`,
    candidates: tied,
  };
}

function describe(c: AcpCandidate): string {
  const parts = [c.title === undefined ? undefined : `"${c.title}"`, c.workspace === undefined ? undefined : `in ${c.workspace}`].filter(
    (p) => p !== undefined,
  );
  return parts.length === 0 ? c.conversationId : `${c.conversationId} (${parts.join(", ")})`;
}

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, "") : path;
}
