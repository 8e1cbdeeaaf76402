import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { agyLikeHandler } from "../support/connect-replies.js";
import { startLoopbackServer, type LoopbackServer, type RecordedRequest } from "../support/loopback-server.js";

const SERVICE_PATH = "/exa.language_server_pb.LanguageServerService/";

let server: LoopbackServer;
let client: AgyRpcClient;
let tokenClient: AgyRpcClient;
let modelsBody: unknown = { response: { models: { a: { model: "MODEL_X", displayName: "X" } }, defaultAgentModelId: "MODEL_X" } };
let summariesBody: unknown = { trajectorySummaries: { "c-1": { trajectoryId: "t-1", stepCount: 3 } } };

beforeAll(async () => {
  server = await startLoopbackServer({
    kind: "http1",
    handler: agyLikeHandler({
      unary: {
        Heartbeat: () => ({}),
        GetConversationMetadata: () => ({ metadata: { rootConversationId: "c-1" } }),
        GetCascadeTrajectorySteps: () => ({}),
        GetCascadeTrajectory: () => ({ trajectory: { trajectoryId: "t-1", steps: [] }, numTotalSteps: "0" }),
        HandleCascadeUserInteraction: () => ({}),
        CancelCascadeSteps: () => ({}),
        CancelCascadeInvocation: () => ({}),
        ForceStopCascadeTree: () => ({}),
        GetAllCascadeTrajectories: () => summariesBody,
        GetAvailableModels: () => modelsBody,
        StartCascade: (body) => ({ cascadeId: (body as { cascadeId?: string }).cascadeId ?? "minted" }),
        SendUserCascadeMessage: () => ({}),
      },
      stream: () => [],
    }),
  });
  client = createAgyRpcClient({ baseUrl: server.url });
  tokenClient = createAgyRpcClient({ baseUrl: server.url, csrfToken: "tok-123" });
});
afterAll(async () => {
  await client.close();
  await tokenClient.close();
  await server.close();
});

function lastRequest(): RecordedRequest {
  const request = server.requests.at(-1);
  if (request === undefined) throw new Error("the server saw no request");
  return request;
}

async function sentBody(call: () => Promise<unknown>): Promise<string> {
  await call();
  return lastRequest().body.toString("utf8");
}

describe("unary request bodies", () => {
  it("nests trajectoryId and stepIndex inside interaction for a permission answer", async () => {
    const body = await sentBody(() =>
      client.handleCascadeUserInteraction({ conversationId: "c-1", trajectoryId: "t-1", stepIndex: 7, permission: { allow: true } }),
    );
    expect(body).toBe('{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":7,"permission":{"allow":true}}}');
  });

  it("sends stepIndex 0 explicitly inside interaction", async () => {
    const body = await sentBody(() =>
      client.handleCascadeUserInteraction({
        conversationId: "c-1",
        trajectoryId: "t-1",
        stepIndex: 0,
        permission: { allow: false, scope: "PERMISSION_SCOPE_ONCE", userDenyInstruction: "use ls" },
      }),
    );
    expect(JSON.parse(body)).toEqual({
      cascadeId: "c-1",
      interaction: {
        trajectoryId: "t-1",
        stepIndex: 0,
        permission: { allow: false, scope: "PERMISSION_SCOPE_ONCE", userDenyInstruction: "use ls" },
      },
    });
  });

  it("sends question answers with option ids and omits absent optional fields", async () => {
    const body = await sentBody(() =>
      client.handleCascadeUserInteraction({
        conversationId: "c-1",
        trajectoryId: "t-1",
        stepIndex: 4,
        askQuestion: {
          responses: [
            { question: "Which?", selectedOptionIds: ["2"] },
            { question: "Why?", selectedOptionIds: [], writeInResponse: "because", skipped: false },
          ],
        },
      }),
    );
    expect(body).toBe(
      '{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":4,"askQuestion":{"responses":[' +
        '{"question":"Which?","selectedOptionIds":["2"]},' +
        '{"question":"Why?","selectedOptionIds":[],"writeInResponse":"because","skipped":false}]}}}',
    );
  });

  it("sends a cancelled question as an empty response list", async () => {
    const body = await sentBody(() =>
      client.handleCascadeUserInteraction({
        conversationId: "c-1",
        trajectoryId: "t-1",
        stepIndex: 4,
        askQuestion: { responses: [], cancelled: true },
      }),
    );
    expect(JSON.parse(body)).toEqual({
      cascadeId: "c-1",
      interaction: { trajectoryId: "t-1", stepIndex: 4, askQuestion: { responses: [], cancelled: true } },
    });
  });

  it("sends the exact body of every other method", async () => {
    const cases: Array<[string, () => Promise<unknown>, string]> = [
      ["Heartbeat", () => client.heartbeat(), "{}"],
      ["GetConversationMetadata", () => client.getConversationMetadata({ conversationId: "c-1" }), '{"conversationId":"c-1"}'],
      ["GetCascadeTrajectorySteps", () => client.getCascadeTrajectorySteps({ conversationId: "c-1" }), '{"cascadeId":"c-1"}'],
      ["GetCascadeTrajectorySteps", () => client.getCascadeTrajectorySteps({ conversationId: "c-1", stepOffset: 40 }), '{"cascadeId":"c-1","stepOffset":40}'],
      ["GetCascadeTrajectory", () => client.getCascadeTrajectory({ conversationId: "c-1" }), '{"cascadeId":"c-1"}'],
      ["CancelCascadeSteps", () => client.cancelCascadeSteps({ conversationId: "c-1" }), '{"cascadeId":"c-1"}'],
      ["CancelCascadeSteps", () => client.cancelCascadeSteps({ conversationId: "c-1", stepIndices: [3, 4] }), '{"cascadeId":"c-1","stepIndices":[3,4]}'],
      [
        "CancelCascadeInvocation",
        () => client.cancelCascadeInvocation({ conversationId: "c-1", killBackgroundTasks: true }),
        '{"cascadeId":"c-1","killBackgroundTasks":true}',
      ],
      ["ForceStopCascadeTree", () => client.forceStopCascadeTree({ conversationId: "c-1" }), '{"conversationId":"c-1"}'],
      ["GetAllCascadeTrajectories", () => client.getAllCascadeTrajectories(), "{}"],
      ["GetAvailableModels", () => client.getAvailableModels(), "{}"],
      ["StartCascade", () => client.startCascade(), '{"source":"CORTEX_TRAJECTORY_SOURCE_CLI"}'],
      [
        "StartCascade",
        () => client.startCascade({ conversationId: "u-1", source: "CORTEX_TRAJECTORY_SOURCE_SDK" }),
        '{"cascadeId":"u-1","source":"CORTEX_TRAJECTORY_SOURCE_SDK"}',
      ],
      [
        "SendUserCascadeMessage",
        () => client.sendUserCascadeMessage({ conversationId: "c-1", text: "hello", planModel: "MODEL_X" }),
        '{"cascadeId":"c-1","items":[{"text":"hello"}],"cascadeConfig":{"plannerConfig":{"planModel":"MODEL_X"}}}',
      ],
    ];
    for (const [method, call, expected] of cases) {
      expect(await sentBody(call), method).toBe(expected);
      const request = lastRequest();
      expect(request.path).toBe(`${SERVICE_PATH}${method}`);
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["connect-protocol-version"]).toBe("1");
    }
  });
});

describe("stream request", () => {
  it("envelopes the body: 0x00, a big-endian length, then the JSON", async () => {
    for await (const _ of client.streamAgentStateUpdates({
      conversationId: "c-1",
      subscriberId: "sub-1",
      initialStepsPageBounds: { startIndex: 0, endIndexExclusive: 10 },
    })) {
      // no updates expected
    }
    const request = lastRequest();
    expect(request.path).toBe(`${SERVICE_PATH}StreamAgentStateUpdates`);
    expect(request.headers["content-type"]).toBe("application/connect+json");
    const json = '{"conversationId":"c-1","subscriberId":"sub-1","initialStepsPageBounds":{"startIndex":0,"endIndexExclusive":10}}';
    const expected = Buffer.concat([Buffer.from([0x00]), Buffer.alloc(4), Buffer.from(json)]);
    expected.writeUInt32BE(Buffer.byteLength(json), 1);
    expect(request.body.equals(expected)).toBe(true);
  });

  it("generates a different subscriberId for each stream when none is given", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      for await (const _ of client.streamAgentStateUpdates({ conversationId: "c-1" })) {
        // no updates expected
      }
      const body = JSON.parse(lastRequest().body.subarray(5).toString("utf8")) as { subscriberId?: string };
      ids.push(body.subscriberId ?? "");
    }
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });
});

describe("headers", () => {
  it("sends x-codeium-csrf-token only when the client has a token", async () => {
    await client.heartbeat();
    expect(lastRequest().headers["x-codeium-csrf-token"]).toBeUndefined();
    await tokenClient.heartbeat();
    expect(lastRequest().headers["x-codeium-csrf-token"]).toBe("tok-123");
    for await (const _ of tokenClient.streamAgentStateUpdates({ conversationId: "c-1" })) {
      // no updates expected
    }
    expect(lastRequest().headers["x-codeium-csrf-token"]).toBe("tok-123");
  });
});

describe("responses", () => {
  it("unwraps the model catalog from agy's response wrapper", async () => {
    modelsBody = { response: { models: { a: { model: "MODEL_X", displayName: "X" } }, defaultAgentModelId: "MODEL_X" } };
    expect(await client.getAvailableModels()).toEqual({
      models: { a: { model: "MODEL_X", displayName: "X" } },
      defaultAgentModelId: "MODEL_X",
    });
  });

  it("takes an unwrapped catalog as it is, and a non-object body as empty", async () => {
    modelsBody = { models: { b: { model: "MODEL_Y" } } };
    expect(await client.getAvailableModels()).toEqual({ models: { b: { model: "MODEL_Y" } } });
    modelsBody = [1, 2];
    expect(await client.getAvailableModels()).toEqual({});
  });

  it("returns the trajectory summaries, and none for a non-object body", async () => {
    summariesBody = { trajectorySummaries: { "c-1": { trajectoryId: "t-1", stepCount: 3 } } };
    expect(await client.getAllCascadeTrajectories()).toEqual(summariesBody);
    summariesBody = ["not", "an", "object"];
    expect(await client.getAllCascadeTrajectories()).toEqual({});
  });

  it("reads a missing steps list as an empty conversation", async () => {
    expect(await client.getCascadeTrajectorySteps({ conversationId: "c-1" })).toEqual({ steps: [] });
  });

  it("echoes StartCascade's answer, which names the cascade", async () => {
    expect(await client.startCascade({ conversationId: "u-9" })).toEqual({ cascadeId: "u-9" });
  });
});
