/**
 * The answer variants agy's schema defines beyond `permission`/`askQuestion`
 * (spike-notes §11): exact request bytes, seen by a real loopback server.
 */
import { describe, expect, it } from "vitest";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import type { HandleInteractionInput } from "../../src/rpc/requests.js";
import { agyLikeHandler } from "../support/connect-replies.js";
import { startLoopbackServer } from "../support/loopback-server.js";

/** Sends `input` to a private loopback server and returns the body bytes it saw, as text. */
async function sentBody(input: HandleInteractionInput): Promise<string> {
  const server = await startLoopbackServer({
    kind: "http1",
    handler: agyLikeHandler({ unary: { HandleCascadeUserInteraction: () => ({}) } }),
  });
  const client: AgyRpcClient = createAgyRpcClient({ baseUrl: server.url });
  try {
    await client.handleCascadeUserInteraction(input);
    const request = server.requests.at(-1);
    if (request === undefined) throw new Error("the server saw no request");
    expect(request.path).toBe("/exa.language_server_pb.LanguageServerService/HandleCascadeUserInteraction");
    return request.body.toString("utf8");
  } finally {
    await client.close();
    await server.close();
  }
}

const at = { conversationId: "c-1", trajectoryId: "t-1" };

describe("runCommand answers", () => {
  it("sends confirm inside interaction, next to trajectoryId and stepIndex", async () => {
    expect(await sentBody({ ...at, stepIndex: 5, runCommand: { confirm: true } })).toBe(
      '{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":5,"runCommand":{"confirm":true}}}',
    );
  });

  it("sends a refusal as an explicit confirm false", async () => {
    expect(await sentBody({ ...at, stepIndex: 0, runCommand: { confirm: false } })).toBe(
      '{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":0,"runCommand":{"confirm":false}}}',
    );
  });

  it("echoes the proposed and submitted command lines only when given", async () => {
    expect(
      await sentBody({
        ...at,
        stepIndex: 9,
        runCommand: { confirm: true, proposedCommandLine: "rm -rf build", submittedCommandLine: "rm -rf build" },
      }),
    ).toBe(
      '{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":9,' +
        '"runCommand":{"confirm":true,"proposedCommandLine":"rm -rf build","submittedCommandLine":"rm -rf build"}}}',
    );
  });
});

describe("filePermission answers", () => {
  it("sends allow and omits an absent scope", async () => {
    expect(await sentBody({ ...at, stepIndex: 27, filePermission: { allow: true } })).toBe(
      '{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":27,"filePermission":{"allow":true}}}',
    );
  });

  it("sends a deny as an explicit allow false, with the scope as given", async () => {
    expect(await sentBody({ ...at, stepIndex: 3, filePermission: { allow: false, scope: "PERMISSION_SCOPE_CONVERSATION" } })).toBe(
      '{"cascadeId":"c-1","interaction":{"trajectoryId":"t-1","stepIndex":3,' + '"filePermission":{"allow":false,"scope":"PERMISSION_SCOPE_CONVERSATION"}}}',
    );
  });
});
