/**
 * Who a request is, and the two pairing routes: `POST /v1/pairing/codes`
 * (the bearer token's holder asks for a one-time code) and `POST /v1/pairing`
 * (a browser exchanges the code for a device token). Device tokens
 * authenticate like the bearer token everywhere but the codes route.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import type { FailureLimiter } from "./bearer-token.js";
import type { PairingRequestSchema } from "./contract.js";
import type { Device, DeviceStore } from "./device-store.js";
import { HttpProblem, sendJson } from "./http-problem.js";
import type { PairingCodes } from "./pairing-codes.js";

/** The body of `POST /v1/pairing`. */
export type PairingRequest = z.infer<typeof PairingRequestSchema>;

/** `owner` holds the bearer token; a device holds a device token. */
export type Principal = "owner" | Device;

export interface PairingRoutes {
  /** Undefined when the header carries neither the bearer token nor a paired device's token. */
  authenticate(authorization: string | undefined): Promise<Principal | undefined>;
  /** `POST /v1/pairing/codes`. */
  issue(req: IncomingMessage, res: ServerResponse, principal: Principal): void;
  /** `POST /v1/pairing` (no token: the code is the credential), with its body checked. */
  exchange(req: IncomingMessage, res: ServerResponse, body: PairingRequest): Promise<void>;
}

export interface PairingRoutesOptions {
  /** The constant-time check of the bearer token. */
  bearer: (authorization: string | undefined) => boolean;
  devices?: DeviceStore;
  pairing?: PairingCodes;
  /** The page's public address for links; default the origin of the request's `Host`. */
  pageUrl?: string;
  /** Refused codes count like wrong tokens (the right code is never limited). */
  limiter: FailureLimiter;
}

/** The answer a device's decisions carry: `page:<device name>`. */
export function decidedByDevice(device: Device): string {
  return `page:${device.name}`;
}

export function createPairingRoutes(options: PairingRoutesOptions): PairingRoutes {
  const { devices, pairing, limiter } = options;
  return {
    async authenticate(authorization) {
      if (options.bearer(authorization)) return "owner";
      const given = /^Bearer[ ]+(agyd\.\S+)\s*$/i.exec(authorization ?? "")?.[1];
      if (given === undefined || devices === undefined) return undefined;
      return devices.authenticate(given);
    },
    issue(req, res, principal) {
      // A device must not mint more devices: only the bearer token's holder pairs.
      if (principal !== "owner")
        throw new HttpProblem(
          403,
          "Forbidden",
          "only the bearer token (not a device token) can create pairing codes; run `agy-bridge pair` on the machine serve runs on",
        );
      if (pairing === undefined || devices === undefined) throw new HttpProblem(404, "Not Found", "this server does not pair devices");
      const issued = pairing.issue();
      const base = options.pageUrl ?? `http://${req.headers.host ?? "127.0.0.1"}`;
      sendJson(res, 201, { code: issued.code, expiresAt: new Date(issued.expiresAt).toISOString(), url: `${base.replace(/\/+$/, "")}/#/pair/${issued.code}` });
    },
    async exchange(req, res, body) {
      const address = req.socket.remoteAddress ?? "unknown";
      // The presented code is checked first (constant time): the right code is never locked out,
      // since every local process shares 127.0.0.1 and a neighbour's wrong guesses must not block
      // the phone. Only wrong codes are limited: a guess is a 1 in 2^128 / 32 shot (128-bit codes,
      // at most 32 live), so the limit keeps a flood cheap and visible rather than being the defence.
      if (pairing !== undefined && devices !== undefined && pairing.redeem(body.code)) {
        const { device, token } = await devices.add(body.name);
        sendJson(res, 201, { deviceId: device.id, name: device.name, token });
        return;
      }
      if (limiter.blocked(address)) {
        res.setHeader("retry-after", "60");
        throw new HttpProblem(
          429,
          "Too Many Requests",
          "too many wrong pairing codes from this address; wait a minute (the right code still works), or run `agy-bridge pair` for a new link",
        );
      }
      limiter.fail(address);
      throw new HttpProblem(
        401,
        "Unauthorized",
        "that pairing code is unknown, already used or expired (codes last 5 minutes and pair one device); run `agy-bridge pair` for a new link",
        "pairing_refused",
      );
    },
  };
}
