/**
 * A loopback HTTP/1 server whose reply each test sets, and a client for it
 * holding a CSRF token: started once for the enclosing suite, whose tests
 * each set `respond` before they call.
 */
import { afterAll, beforeAll } from "vitest";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { startLoopbackServer, type Handler, type LoopbackServer } from "./loopback-server.js";

export interface RespondingServer {
  readonly server: LoopbackServer;
  readonly client: AgyRpcClient;
  /** What the server does with each request; at first nothing (the request hangs). */
  respond: Handler;
}

/** Registers the suite's `beforeAll`/`afterAll`; `server` and `client` are there from the first test on. */
export function useRespondingServer(csrfToken: string): RespondingServer {
  let server: LoopbackServer | undefined;
  let client: AgyRpcClient | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the responding server starts in beforeAll; use it inside a test");
    return value;
  };
  const handle: RespondingServer = {
    get server() {
      return started(server);
    },
    get client() {
      return started(client);
    },
    respond: () => undefined,
  };
  beforeAll(async () => {
    server = await startLoopbackServer({ kind: "http1", handler: (context) => handle.respond(context) });
    client = createAgyRpcClient({ baseUrl: server.url, csrfToken });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });
  return handle;
}
