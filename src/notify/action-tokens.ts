/**
 * One-time action tokens for buttons outside the page (ntfy's `http`
 * actions): each is good for one interaction, one action, and one use, and
 * dies when its interaction is resolved or after a day. Only a hash of each
 * token is kept, so the map itself holds nothing a reader could replay.
 *
 * A token may also stand for "and remember it" (ntfy's Always allow /
 * Always deny): `POST /v1/actions` answers it like any other, and the tokens
 * note which remembering tokens of an interaction were redeemed, so the
 * notifier saves the rule once the resolution says that answer was the one
 * delivered ({@link ActionTokens.remembered}).
 */
import { createHash, randomBytes } from "node:crypto";

export interface ScopedAction {
  conversationId: string;
  interactionId: string;
  action: "approve" | "deny";
  /** The press also saves the rule its message offered. */
  remember?: true;
}

export interface ActionTokens {
  mint(scope: ScopedAction): string;
  /** The token's scope, once: a second redeem, or one after it expired or was revoked, is undefined. */
  redeem(token: string): ScopedAction | undefined;
  /** Revokes every token of the interaction (it was resolved elsewhere). */
  revoke(interactionId: string): void;
  /** The actions of the interaction's remembering tokens redeemed so far, once: the record is then dropped. */
  remembered(interactionId: string): ReadonlySet<"approve" | "deny">;
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
  const pressed = new Map<string, { actions: Set<"approve" | "deny">; expires: number }>();
  const sweep = () => {
    const at = now();
    for (const [key, entry] of tokens) if (entry.expires <= at) tokens.delete(key);
    for (const [key, entry] of pressed) if (entry.expires <= at) pressed.delete(key);
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
      const scope: ScopedAction = { conversationId: entry.conversationId, interactionId: entry.interactionId, action: entry.action };
      if (entry.remember === true) {
        scope.remember = true;
        const record = pressed.get(entry.interactionId) ?? { actions: new Set(), expires: entry.expires };
        record.actions.add(entry.action);
        pressed.set(entry.interactionId, record);
      }
      return scope;
    },
    revoke(interactionId) {
      for (const [key, entry] of tokens) if (entry.interactionId === interactionId) tokens.delete(key);
    },
    remembered(interactionId) {
      const record = pressed.get(interactionId);
      pressed.delete(interactionId);
      return record?.actions ?? new Set();
    },
  };
}
