/**
 * One-time action tokens for buttons outside the page (ntfy's `http`
 * actions): each is good for one interaction, one action, and one use, and
 * dies when its interaction is resolved or after a day. Only a hash of each
 * token is kept, so the map itself holds nothing a reader could replay.
 */
import { createHash, randomBytes } from "node:crypto";

export interface ScopedAction {
  conversationId: string;
  interactionId: string;
  action: "approve" | "deny";
}

export interface ActionTokens {
  mint(scope: ScopedAction): string;
  /** The token's scope, once: a second redeem, or one after it expired or was revoked, is undefined. */
  redeem(token: string): ScopedAction | undefined;
  /** Revokes every token of the interaction (it was resolved elsewhere). */
  revoke(interactionId: string): void;
}

export interface ActionTokensOptions {
  /** Default 24 hours. */
  lifetimeMs?: number;
  /** Default `Date.now`. */
  now?: () => number;
}

const hash = (token: string): string => createHash("sha256").update(token).digest("base64url");

export function createActionTokens(options: ActionTokensOptions = {}): ActionTokens {
  const lifetimeMs = options.lifetimeMs ?? 86_400_000;
  const now = options.now ?? Date.now;
  const tokens = new Map<string, ScopedAction & { expires: number }>();
  const sweep = () => {
    const at = now();
    for (const [key, entry] of tokens) if (entry.expires <= at) tokens.delete(key);
  };
  return {
    mint(scope) {
      sweep();
      const token = `act_${randomBytes(32).toString("base64url")}`;
      tokens.set(hash(token), { ...scope, expires: now() + lifetimeMs });
      return token;
    },
    redeem(token) {
      const key = hash(token);
      const entry = tokens.get(key);
      if (entry === undefined) return undefined;
      tokens.delete(key);
      if (entry.expires <= now()) return undefined;
      return { conversationId: entry.conversationId, interactionId: entry.interactionId, action: entry.action };
    },
    revoke(interactionId) {
      for (const [key, entry] of tokens) if (entry.interactionId === interactionId) tokens.delete(key);
    },
  };
}
