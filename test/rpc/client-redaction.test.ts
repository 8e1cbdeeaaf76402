/**
 * A server that echoes the CSRF token back, in every place an answer can carry
 * text: the token must not reach any field of the error, nor any error in its
 * cause chain, not even in part where some length cap cut it.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import type { RpcError } from "../../src/errors.js";
import { dataFrame, endFrame, frame, replyJson } from "../support/connect-replies.js";
import type { HandlerContext } from "../support/loopback-server.js";
import { useRespondingServer } from "../support/responding-server.js";
import { collect, rpcFailure } from "../support/rpc-failure.js";

const TOKEN = "Qz7xK2mW9vR4bL8pN3dY6t";
/** Any 4 characters of the token in a row count as a leak. */
const PIECE = 4;

function everyText(error: unknown): string {
  const parts: string[] = [inspect(error, { depth: 30, showHidden: true, breakLength: Infinity })];
  for (let e: unknown = error, hops = 0; e !== undefined && e !== null && hops < 30; hops++) {
    if (typeof e !== "object") {
      parts.push(String(e));
      break;
    }
    for (const key of Object.getOwnPropertyNames(e)) {
      const value = (e as Record<string, unknown>)[key];
      parts.push(typeof value === "string" ? value : inspect(value, { depth: 30, showHidden: true }));
    }
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join("\n");
}

function expectNoTokenPiece(error: unknown): void {
  const text = everyText(error);
  for (let i = 0; i + PIECE <= TOKEN.length; i++) {
    const piece = TOKEN.slice(i, i + PIECE);
    expect(text.includes(piece), `"${piece}" of the token leaked in:\n${text.slice(0, 3000)}`).toBe(false);
  }
}

async function failure(promise: Promise<unknown>): Promise<RpcError> {
  const error = await rpcFailure(promise);
  expectNoTokenPiece(error);
  return error;
}

const rpc = useRespondingServer(TOKEN);

function plain(status: number, body: string) {
  return ({ res }: HandlerContext) => {
    res.writeHead(status, { "content-type": "text/plain" });
    res.end(body);
  };
}

function streamOf(...frames: Buffer[]) {
  return ({ res }: HandlerContext) => {
    res.writeHead(200, { "content-type": "application/connect+json" });
    res.end(Buffer.concat(frames));
  };
}

describe("a unary answer that echoes the token", () => {
  it("is scrubbed from a plain-text error body, keeping the rest verbatim", async () => {
    rpc.respond = plain(500, `input not registered: ${TOKEN} rejected`);
    const error = await failure(rpc.client.heartbeat());
    expect(error.serverMessage).toBe("input not registered: [redacted] rejected");
    expect(error.isInputNotRegistered).toBe(true);
  });

  it("is scrubbed from the Connect code and message of a JSON error body", async () => {
    rpc.respond = ({ res }) => replyJson(res, { code: `bad_${TOKEN}`, message: `token ${TOKEN}` }, 401);
    const error = await failure(rpc.client.heartbeat());
    expect(error.connectCode).toBe("bad_[redacted]");
    expect(error.serverMessage).toBe("token [redacted]");
  });

  for (const at of [500 - TOKEN.length + 1, 490, 496]) {
    it(`leaves no piece of a token straddling the 500-character quote (token at ${at})`, async () => {
      rpc.respond = plain(500, `${"x".repeat(at)}${TOKEN}${"y".repeat(600)}`);
      const error = await failure(rpc.client.heartbeat());
      expect(error.serverMessage).toBe(`${"x".repeat(at)}[redacted]${"y".repeat(600)}`);
    });
  }

  for (const before of [1, 11, TOKEN.length - 1]) {
    it(`leaves no piece of a token straddling the 64 KiB error-body cap (${before} characters before it)`, async () => {
      rpc.respond = plain(500, `${"x".repeat(64 * 1024 - before)}${TOKEN}${"y".repeat(100)}`);
      const error = await failure(rpc.client.heartbeat());
      expect(error.serverMessage?.endsWith("x[redacted]")).toBe(true);
    });
  }

  it("is scrubbed from the cause when a 200 body is not JSON", async () => {
    // V8 quotes about ten characters of the body, cut with "...": a piece of the token, or all of it.
    for (const body of [`<html>${TOKEN}</html>`, `<${TOKEN}`, `${TOKEN}${TOKEN.slice(0, 6)}`, `{"a":1} ${TOKEN}`]) {
      rpc.respond = plain(200, body);
      const error = await failure(rpc.client.getConversationMetadata({ conversationId: "c" }));
      expect(error.code).toBe("protocol");
    }
  });

  it("is scrubbed from a validation path when the token is a JSON key", async () => {
    rpc.respond = ({ res }) => replyJson(res, { trajectorySummaries: { [TOKEN]: { stepCount: true } } });
    const error = await failure(rpc.client.getAllCascadeTrajectories());
    expect(error.code).toBe("protocol");
    expect(error.message).toContain("trajectorySummaries.[redacted].stepCount");
  });
});

describe("a stream that echoes the token", () => {
  it("is scrubbed from a non-2xx body", async () => {
    rpc.respond = plain(503, `busy, ${TOKEN}`);
    const error = await failure(collect(rpc.client.streamAgentStateUpdates({ conversationId: "c" })));
    expect(error.serverMessage).toBe("busy, [redacted]");
  });

  it("is scrubbed from the code and message of an error trailer", async () => {
    rpc.respond = streamOf(endFrame({ error: { code: TOKEN, message: `no ${TOKEN} here` } }));
    const error = await failure(collect(rpc.client.streamAgentStateUpdates({ conversationId: "c" })));
    expect(error.code).toBe("rpc_error");
    expect(error.connectCode).toBe("[redacted]");
    expect(error.serverMessage).toBe("no [redacted] here");
  });

  it("is scrubbed from the cause when a data frame is not JSON", async () => {
    rpc.respond = streamOf(dataFrame({ update: {} }), frame(0, `<html>${TOKEN}`));
    const error = await failure(collect(rpc.client.streamAgentStateUpdates({ conversationId: "c" })));
    expect(error.code).toBe("protocol");
  });
});
