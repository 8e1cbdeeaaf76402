/**
 * A loopback HTTP proxy in front of the simulator that can hold the reply to
 * `HandleCascadeUserInteraction`: agy has taken the answer, but the caller
 * never hears back — the moment a relay is killed in the middle of a command.
 * It counts the answers that reached agy.
 */
import { createServer, request, type Server } from "node:http";

export interface AnswerProxy {
  readonly url: string;
  /** `HandleCascadeUserInteraction` calls forwarded to agy so far. */
  readonly answers: number;
  /** Whether replies to answers are held (default false). */
  holdAnswers(hold: boolean): void;
  close(): Promise<void>;
}

export async function startAnswerProxy(target: string): Promise<AnswerProxy> {
  const upstream = new URL(target);
  let answers = 0;
  let hold = false;
  const server: Server = createServer((req, res) => {
    const isAnswer = (req.url ?? "").endsWith("/HandleCascadeUserInteraction");
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (reply) => {
      // A reply means agy took the answer.
      if (isAnswer) answers++;
      if (isAnswer && hold) {
        reply.resume();
        return;
      }
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    forward.on("error", () => res.destroy());
    req.pipe(forward);
    res.on("close", () => forward.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    get answers() {
      return answers;
    },
    holdAnswers(value) {
      hold = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
