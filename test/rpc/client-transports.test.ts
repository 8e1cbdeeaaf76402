import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { createSelfSignedCertificate, type SelfSignedCertificate } from "../../src/sim/server/certificate.js";
import { agyLikeHandler } from "../support/connect-replies.js";
import { startLoopbackServer, type LoopbackServer, type ServerKind } from "../support/loopback-server.js";
import { collect, rpcFailure } from "../support/rpc-failure.js";

const TOKEN = "csrf-7f3a9c1e-secret";

const steps = [
  { type: "CORTEX_STEP_TYPE_USER_INPUT", status: "CORTEX_STEP_STATUS_DONE", userInput: { userResponse: "hi" } },
  {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: "CORTEX_STEP_STATUS_DONE",
    metadata: { sourceTrajectoryStepInfo: { trajectoryId: "t-1", stepIndex: 1 } },
  },
];

const handler = agyLikeHandler({
  unary: { GetCascadeTrajectorySteps: () => ({ steps }) },
  stream: (body) => [
    { conversationId: (body as { conversationId: string }).conversationId, status: "CASCADE_RUN_STATUS_RUNNING" },
    { conversationId: "c-1", status: "CASCADE_RUN_STATUS_IDLE", fullyIdle: true },
  ],
});

const combos: Array<{ kind: ServerKind; httpVersion: "1.1" | "2" }> = [
  { kind: "http1", httpVersion: "1.1" },
  { kind: "h2c", httpVersion: "2" },
  { kind: "tls", httpVersion: "1.1" },
  { kind: "tls", httpVersion: "2" },
];

let certificate: SelfSignedCertificate;
beforeAll(async () => {
  certificate = await createSelfSignedCertificate();
});

for (const { kind, httpVersion } of combos) {
  for (const csrfToken of [undefined, TOKEN]) {
    describe(`${kind} server, HTTP/${httpVersion} client, ${csrfToken ? "CSRF token required" : "no CSRF token"}`, () => {
      let server: LoopbackServer;
      const clients: AgyRpcClient[] = [];
      const client = (token: string | undefined) => {
        const c = createAgyRpcClient({ baseUrl: server.url, httpVersion, ...(token ? { csrfToken: token } : {}) });
        clients.push(c);
        return c;
      };

      beforeAll(async () => {
        server = await startLoopbackServer({ kind, certificate, handler, ...(csrfToken ? { csrfToken } : {}) });
      });
      afterAll(async () => {
        await Promise.all(clients.map((c) => c.close()));
        await server.close();
      });

      it("reads a steps snapshot over a unary call", async () => {
        const result = await client(csrfToken).getCascadeTrajectorySteps({ conversationId: "c-1" });
        expect(result.steps).toEqual(steps);
        const last = server.requests.at(-1);
        expect(last?.httpVersion).toBe(httpVersion === "2" ? "2.0" : "1.1");
      });

      it("yields the inner updates of a server stream until its clean trailer", async () => {
        const updates = await collect(client(csrfToken).streamAgentStateUpdates({ conversationId: "c-1" }));
        expect(updates).toEqual([
          { conversationId: "c-1", status: "CASCADE_RUN_STATUS_RUNNING" },
          { conversationId: "c-1", status: "CASCADE_RUN_STATUS_IDLE", fullyIdle: true },
        ]);
      });

      if (csrfToken !== undefined) {
        for (const sent of [undefined, "wrong-token-value"]) {
          const label = sent === undefined ? "without a token" : "with the wrong token";
          it(`reports 401 as unauthenticated on a unary call ${label}, without leaking the token`, async () => {
            const error = await rpcFailure(client(sent).getCascadeTrajectorySteps({ conversationId: "c-1" }));
            expect(error.httpStatus).toBe(401);
            expect(error.isUnauthenticated).toBe(true);
            expect(error.serverMessage).toBe("missing CSRF token");
            expect(`${error.message}${error.serverMessage}`).not.toContain(TOKEN);
            if (sent !== undefined) expect(error.message).not.toContain(sent);
          });

          it(`reports 401 as unauthenticated on a stream ${label}, never as a clean end`, async () => {
            const error = await rpcFailure(collect(client(sent).streamAgentStateUpdates({ conversationId: "c-1" })));
            expect(error.code).toBe("http_status");
            expect(error.isUnauthenticated).toBe(true);
            expect(error.message).not.toContain(TOKEN);
          });
        }
      }
    });
  }
}
