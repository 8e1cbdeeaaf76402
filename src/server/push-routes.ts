/**
 * The page's Web Push routes: the VAPID key to subscribe with, and storing or
 * forgetting this browser's subscription. A subscription is tied to the
 * device that stored it (revoking the device deletes it); the owner's is
 * `owner`. Without `push` the server sends none and these answer 404.
 */
import type { ApiServerOptions } from "./api-options.js";
import type { PushSubscriptionBody } from "./contract.js";
import { HttpProblem, sendJson } from "./http-problem.js";
import type { Principal } from "./pairing-routes.js";
import type { RouteCall } from "./route-spec.js";

type Push = NonNullable<ApiServerOptions["push"]>;

/** The push options, or a 404 when this server sends no push notifications. */
export function pushOf(options: ApiServerOptions): Push {
  if (options.push === undefined) throw new HttpProblem(404, "Not Found", "this server sends no push notifications");
  return options.push;
}

/** `GET /v1/push/key`. */
export function sendPushKey(call: RouteCall<undefined>): void {
  sendJson(call.res, 200, { publicKey: pushOf(call.context.options).publicKey });
}

/** `POST /v1/push/subscriptions`: 201 when new, 200 when its keys were replaced. */
export async function subscribe(call: RouteCall<PushSubscriptionBody>): Promise<void> {
  const stored = await pushOf(call.context.options).subscribe(call.body, deviceOf(call.principal));
  sendJson(call.res, stored.created ? 201 : 200, stored);
}

/** `DELETE /v1/push/subscriptions` (a route only when `push.unsubscribe` is given). */
export async function unsubscribe(call: RouteCall<{ endpoint: string }>): Promise<void> {
  const removed = await pushOf(call.context.options).unsubscribe!(call.body.endpoint, deviceOf(call.principal));
  sendJson(call.res, 200, { removed });
}

function deviceOf(principal: Principal): string {
  return principal === "owner" ? "owner" : principal.id;
}
