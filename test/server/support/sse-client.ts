/**
 * A minimal SSE reader over node:http for tests: collects messages and lets a
 * test wait, with its own bound, for a condition over what arrived.
 */
import { request, type IncomingMessage } from "node:http";

export interface SseMessage {
  /** The id as sent: `<epoch>-<seq>`. */
  id?: string;
  /** The id's epoch and sequence number. */
  epoch?: string;
  seq?: number;
  event?: string;
  data: string;
}

export interface SseClient {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly messages: SseMessage[];
  readonly comments: string[];
  readonly ended: boolean;
  /** Resolves once `predicate` holds; rejects after `timeoutMs` saying what arrived. */
  until(predicate: (client: SseClient) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): void;
}

export function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      const messages: SseMessage[] = [];
      const comments: string[] = [];
      const checks = new Set<() => void>();
      let buffer = "";
      let ended = false;
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const message: SseMessage = { data: "" };
          let isMessage = false;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else if (line.startsWith("id: ")) {
              message.id = line.slice(4);
              const cut = message.id.lastIndexOf("-");
              message.epoch = message.id.slice(0, Math.max(0, cut));
              message.seq = Number(message.id.slice(cut + 1));
            } else if (line.startsWith("event: ")) message.event = line.slice(7);
            else if (line.startsWith("data: ")) {
              message.data += line.slice(6);
              isMessage = true;
            }
          }
          if (isMessage) messages.push(message);
        }
        for (const check of checks) check();
      });
      const finish = () => {
        ended = true;
        for (const check of checks) check();
      };
      res.on("end", finish);
      res.on("close", finish);
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        comments,
        get ended() {
          return ended;
        },
        until(predicate, what, timeoutMs = 10_000) {
          return new Promise((done, fail) => {
            const check = () => {
              if (!predicate(client)) return;
              clearTimeout(timer);
              checks.delete(check);
              done();
            };
            const timer = setTimeout(() => {
              checks.delete(check);
              fail(
                new Error(
                  `timed out after ${timeoutMs} ms waiting for ${what}; got ${messages.length} messages (${messages.map((m) => `${m.id}:${m.event}`).join(", ")}), comments ${JSON.stringify(comments)}, ended ${ended}`,
                ),
              );
            }, timeoutMs);
            checks.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      };
      resolve(client);
    });
    req.on("error", reject);
    req.end();
  });
}
