/**
 * RFC 9457 problem details as the API sends them, and the small writers the
 * router shares. A problem carries only what the server chose to say: never a
 * header, a body or the token.
 */
import type { ServerResponse } from "node:http";
import { AgyBridgeError } from "../errors.js";
import type { Problem } from "./contract.js";

const PROBLEM_TYPE = "about:blank";

export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly result?: string,
    readonly interactionId?: string,
  ) {
    super(detail);
  }
}

/**
 * A session's `invalid_argument` means the request does not fit the
 * interaction (a scope a gate does not take, an option it does not offer):
 * the client can fix it, so it is 422, not a gateway failure.
 */
export function toProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof AgyBridgeError && error.code === "invalid_argument")
    return new HttpProblem(422, "Unprocessable Content", error.message, "invalid_argument");
  if (error instanceof AgyBridgeError) return new HttpProblem(502, "Bad Gateway", error.message);
  return new HttpProblem(500, "Internal Server Error", "the request failed inside agy-bridge; the server log has no more detail than this");
}

export function methodNotAllowed(): HttpProblem {
  return new HttpProblem(405, "Method Not Allowed", "this route does not take that method; see /v1/openapi.json");
}

export function notFound(): HttpProblem {
  return new HttpProblem(404, "Not Found", "no such route; see /v1/openapi.json");
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  const body: Problem = { type: PROBLEM_TYPE, title: problem.title, status: problem.status, detail: problem.detail };
  if (problem.result !== undefined) body.result = problem.result;
  if (problem.interactionId !== undefined) body.interactionId = problem.interactionId;
  const text = JSON.stringify(body);
  res.writeHead(problem.status, {
    "content-type": "application/problem+json; charset=utf-8",
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}
