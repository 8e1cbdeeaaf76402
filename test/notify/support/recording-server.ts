/**
 * A loopback HTTP server that records every request with its exact body
 * bytes and answers with whatever the test's responder says — the stand-in
 * for webhook receivers, push services and ntfy.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type Responder = (
  request: Recorded,
  index: number,
) => { status: number; body?: string; headers?: Record<string, string> } | Promise<{ status: number; body?: string; headers?: Record<string, string> }>;

export interface RecordingServer {
  url: string;
  requests: Recorded[];
  /** Waits (bounded) until `predicate` holds for the requests so far; fails saying what it saw. */
  until(predicate: (requests: Recorded[]) => boolean, what: string, timeoutMs?: number): Promise<Recorded[]>;
  close(): Promise<void>;
}

export async function startRecordingServer(respond: Responder = () => ({ status: 200 })): Promise<RecordingServer> {
  const requests: Recorded[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: Recorded = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) };
      const index = requests.push(recorded) - 1;
      for (const wake of waiters) wake();
      void Promise.resolve(respond(recorded, index)).then((answer) => {
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(answer.body ?? "");
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    until(predicate, what, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        // Called from the server's request handler too: a predicate that throws
        // (a body it cannot read) fails this wait instead of escaping as an uncaught error.
        const check = () => {
          let held: boolean;
          try {
            held = predicate(requests);
          } catch (error) {
            cleanup();
            reject(new Error(`while waiting for ${what}, reading the ${requests.length} request(s) failed: ${(error as Error).message}`, { cause: error }));
            return;
          }
          if (!held) return;
          cleanup();
          resolve(requests);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${what}; saw ${requests.length} request(s): ${requests.map((r) => `${r.method} ${r.path} ${r.body.toString("utf8").slice(0, 200)}`).join(" | ")}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
