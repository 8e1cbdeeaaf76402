import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { decodeStreamBody } from "../../src/rpc/response-decoding.js";
import { dataFrame, endFrame, frame, replyChunks } from "../support/connect-replies.js";
import { startLoopbackServer, type LoopbackServer } from "../support/loopback-server.js";
import { collect } from "../support/rpc-failure.js";

const TOKEN = "csrf-framing-secret-42";

async function streamFailure(iterable: AsyncIterable<unknown>): Promise<RpcError> {
  const reason = await collect(iterable).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(reason).toBeInstanceOf(RpcError);
  const error = reason as RpcError;
  expect(`${error.message} ${error.serverMessage ?? ""}`).not.toContain(TOKEN);
  return error;
}

async function* chunked(...chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

const first = { conversationId: "c-1", status: "CASCADE_RUN_STATUS_RUNNING" };
const second = { conversationId: "c-1", mainTrajectoryUpdate: { stepsUpdate: { indices: [0], steps: [{}] } } };
const stream = Buffer.concat([dataFrame({ update: first }), dataFrame({ update: second }), endFrame({})]);

describe("decodeStreamBody", () => {
  it("yields the same updates whichever byte the body is split at", async () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const updates = await collect(decodeStreamBody(chunked(stream.subarray(0, cut), stream.subarray(cut)), { method: "StreamAgentStateUpdates" }));
      expect(updates).toEqual([first, second]);
    }
  });

  it("yields the same updates when every byte arrives alone", async () => {
    const bytes = [...stream].map((b) => Uint8Array.of(b));
    expect(await collect(decodeStreamBody(chunked(...bytes), { method: "M" }))).toEqual([first, second]);
  });
});

describe("StreamAgentStateUpdates framing against exact server bytes", () => {
  let server: LoopbackServer;
  let client: AgyRpcClient;
  /** What the raw server sends next: chunks written one by one, or a status with a plain body. */
  let script: { chunks?: Uint8Array[]; status?: number; body?: string } = {};

  beforeAll(async () => {
    server = await startLoopbackServer({
      kind: "http1",
      handler: async ({ res }) => {
        if (script.status !== undefined && script.status !== 200) {
          res.writeHead(script.status, { "content-type": "text/plain" });
          res.end(script.body ?? "");
          return;
        }
        await replyChunks(res, script.chunks ?? []);
      },
    });
    client = createAgyRpcClient({ baseUrl: server.url, csrfToken: TOKEN });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const run = (chunks: Uint8Array[]) => {
    script = { chunks };
    return client.streamAgentStateUpdates({ conversationId: "c-1" });
  };

  it("reassembles frames written in two pieces at every byte boundary", async () => {
    for (let cut = 1; cut < stream.length; cut++) {
      expect(await collect(run([stream.subarray(0, cut), stream.subarray(cut)]))).toEqual([first, second]);
    }
  });

  it("reads several frames packed into one write", async () => {
    expect(await collect(run([stream]))).toEqual([first, second]);
  });

  it("reads a 5-byte header split across three writes", async () => {
    const one = dataFrame({ update: first });
    expect(await collect(run([one.subarray(0, 2), one.subarray(2, 4), one.subarray(4), endFrame({})]))).toEqual([first]);
  });

  it("yields a frame without the update wrapper as it is", async () => {
    expect(await collect(run([dataFrame({ conversationId: "bare" }), endFrame()]))).toEqual([{ conversationId: "bare" }]);
  });

  it("ends cleanly on a {} trailer, an empty trailer and a non-object trailer", async () => {
    for (const trailer of [endFrame({}), frame(0x02), endFrame("[1,2]"), endFrame({ error: null })]) {
      expect(await collect(run([dataFrame({ update: first }), trailer]))).toEqual([first]);
    }
  });

  it("ignores bytes after the trailer", async () => {
    const after = Buffer.concat([endFrame({}), dataFrame({ update: second }), Buffer.from("garbage")]);
    expect(await collect(run([dataFrame({ update: first }), after]))).toEqual([first]);
  });

  it("raises the trailer's error with its code and message", async () => {
    const error = await streamFailure(run([dataFrame({ update: first }), endFrame({ error: { code: "internal", message: "stream broke" } })]));
    expect(error.code).toBe("rpc_error");
    expect(error.connectCode).toBe("internal");
    expect(error.serverMessage).toBe("stream broke");
  });

  it("surfaces agy's answer to an un-enveloped request as an RpcError carrying its message", async () => {
    const message = "protocol error: promised 576941934 bytes in enveloped message, got 53 bytes";
    const error = await streamFailure(run([endFrame({ error: { code: "invalid_argument", message } })]));
    expect(error.code).toBe("rpc_error");
    expect(error.connectCode).toBe("invalid_argument");
    expect(error.serverMessage).toBe(message);
    expect(error.message).toContain(message);
  });

  it("refuses a compressed frame, even one flagged as the trailer", async () => {
    for (const flags of [0x01, 0x03]) {
      const error = await streamFailure(run([frame(flags, {})]));
      expect(error.code).toBe("protocol");
      expect(error.message).toMatch(/compressed/);
    }
  });

  it("refuses a data frame whose payload is not JSON", async () => {
    const error = await streamFailure(run([frame(0x00, "{not json"), endFrame()]));
    expect(error.code).toBe("protocol");
    expect(error.message).toMatch(/not JSON/);
  });

  it("refuses a length prefix over the frame cap without waiting for the bytes", async () => {
    const capped = createAgyRpcClient({ baseUrl: server.url, csrfToken: TOKEN, maxFrameBytes: 1024 });
    script = { chunks: [Buffer.from([0x00, 0x7f, 0xff, 0xff, 0xff])] };
    const error = await streamFailure(capped.streamAgentStateUpdates({ conversationId: "c-1" }));
    await capped.close();
    expect(error.code).toBe("protocol");
    expect(error.message).toMatch(/over the 1024-byte limit/);
  });

  it("reports a stream cut in the middle of a frame", async () => {
    const one = dataFrame({ update: first });
    const error = await streamFailure(run([one, dataFrame({ update: second }).subarray(0, 9)]));
    expect(error.code).toBe("protocol");
    expect(error.message).toMatch(/stream was cut in the middle of a frame/);
  });

  it("reports a stream that ends between frames without a trailer", async () => {
    const error = await streamFailure(run([dataFrame({ update: first })]));
    expect(error.code).toBe("protocol");
    expect(error.message).toMatch(/stream was cut between frames/);
  });

  it("raises a non-2xx status instead of reading zero frames as a clean end", async () => {
    script = { status: 503, body: "overloaded" };
    const error = await streamFailure(client.streamAgentStateUpdates({ conversationId: "c-1" }));
    expect(error.code).toBe("http_status");
    expect(error.httpStatus).toBe(503);
    expect(error.serverMessage).toBe("overloaded");
  });
});
