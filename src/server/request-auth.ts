/**
 * Who a request is. A `/v1` route takes the bearer token or a paired
 * device's token (`pairing-routes.ts` tells them apart); a notification's
 * button takes a one-time action token instead. Only wrong credentials are
 * limited, per address, so a flood of guesses stays cheap and visible.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiContext } from "./api-options.js";
import { HttpProblem } from "./http-problem.js";
import { decidedByDevice, type Principal } from "./pairing-routes.js";

/** What a one-time action token was minted for. */
export interface ActionScope {
  conversationId: string;
  interactionId: string;
  action: "approve" | "deny";
}

/** Who holds the request's bearer token (the owner or a paired device); a 401, or 429 after many failures, otherwise. */
export async function authenticate(context: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<Principal> {
  const principal = await context.pairingRoutes.authenticate(req.headers.authorization);
  if (principal !== undefined) return principal;
  // Every local process shares 127.0.0.1, so a noisy neighbour must not lock
  // the real token out: only wrong tokens are limited (a 256-bit token is
  // not guessable; the limit keeps a flood of guesses cheap and visible).
  const address = req.socket.remoteAddress ?? "unknown";
  if (context.limiter.blocked(address)) {
    res.setHeader("retry-after", "60");
    throw new HttpProblem(429, "Too Many Requests", "too many failed authentications from this address; wait a minute and check the token");
  }
  context.limiter.fail(address);
  res.setHeader("www-authenticate", 'Bearer realm="agy-bridge"');
  throw new HttpProblem(401, "Unauthorized", "send Authorization: Bearer <token>; the token is in the file `agy-bridge serve` printed, or AGY_BRIDGE_TOKEN");
}

/** The interaction and action the request's one-time action token names (it is used up); 401, or 429 after many failures, otherwise. */
export function redeemActionToken(context: ApiContext, req: IncomingMessage, res: ServerResponse): ActionScope {
  const { options, limiter } = context;
  const address = req.socket.remoteAddress ?? "unknown";
  if (limiter.blocked(address)) {
    res.setHeader("retry-after", "60");
    throw new HttpProblem(429, "Too Many Requests", "too many failed authentications from this address; wait a minute");
  }
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
  const scope = match === null ? undefined : options.actions?.redeem(match[1]!);
  if (scope === undefined) {
    limiter.fail(address);
    throw new HttpProblem(401, "Unauthorized", "this action token is unknown, used or expired; answer on the page instead");
  }
  return scope;
}

/** The approval page says so; any other holder of the token is a bot. A paired device is always the page. */
export function decidedByOf(principal: Principal, req: IncomingMessage): string {
  return principal !== "owner" ? decidedByDevice(principal) : req.headers["x-agy-bridge-client"] === "page" ? "page" : "http:default";
}
