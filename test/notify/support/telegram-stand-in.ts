/**
 * A Telegram Bot API stand-in on loopback (https://core.telegram.org/bots/api):
 * `POST /bot<token>/<method>` with a JSON body, answered `{"ok":true,"result":…}`
 * or `{"ok":false,"error_code":…,"description":…}`. It implements the four
 * methods the bot uses — getUpdates (long polling with `offset`, `timeout`),
 * sendMessage, editMessageText, answerCallbackQuery — and lets a test press
 * an inline button as a user of some chat.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface StandInMessage {
  message_id: number;
  chat: { id: number; type: string };
  date: number;
  text: string;
  reply_markup?: { inline_keyboard: Array<Array<{ text: string; callback_data?: string }>> } | undefined;
  /** Every text this message had, oldest first (edits append). */
  history: string[];
}

export interface TelegramStandIn {
  apiRoot: string;
  messages: StandInMessage[];
  /** Every method call, in order. */
  calls: Array<{ method: string; body: Record<string, unknown> }>;
  /** The answers given to button presses, by callback query id. */
  callbackAnswers: Map<string, string | undefined>;
  /** Queues a callback_query update, as if a user in `chatId` pressed the button. Returns its id. */
  press(chatId: number, messageId: number, data: string, from?: { id: number; username?: string }): string;
  until<T>(probe: () => T | undefined, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startTelegramStandIn(token: string): Promise<TelegramStandIn> {
  const messages: StandInMessage[] = [];
  const calls: TelegramStandIn["calls"] = [];
  const callbackAnswers = new Map<string, string | undefined>();
  let updates: Array<{ update_id: number; callback_query: Record<string, unknown> }> = [];
  let nextUpdate = 1;
  let nextMessage = 100;
  let nextQuery = 1;
  const pollers = new Set<() => void>();
  const changed = new Set<() => void>();
  const touch = () => {
    for (const wake of [...pollers]) wake();
    for (const wake of [...changed]) wake();
  };
  const ok = (res: ServerResponse, result: unknown) => send(res, 200, { ok: true, result });
  const fail = (res: ServerResponse, code: number, description: string) => send(res, code, { ok: false, error_code: code, description });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? "");
      if (match === null || req.method !== "POST") return fail(res, 404, "Not Found");
      if (match[1] !== token) return fail(res, 401, "Unauthorized");
      const method = match[2]!;
      const text = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try {
        body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch {
        return fail(res, 400, "Bad Request: can't parse JSON");
      }
      calls.push({ method, body });
      touch();
      switch (method) {
        case "getUpdates": {
          const offset = typeof body["offset"] === "number" ? body["offset"] : 0;
          // An offset confirms every update before it.
          updates = updates.filter((u) => u.update_id >= offset);
          const answer = () => ok(res, updates.slice(0, typeof body["limit"] === "number" ? body["limit"] : 100));
          if (updates.length > 0) return answer();
          const timeoutS = typeof body["timeout"] === "number" ? body["timeout"] : 0;
          const wake = () => {
            if (updates.length === 0) return;
            done();
          };
          const done = () => {
            clearTimeout(timer);
            pollers.delete(wake);
            answer();
          };
          const timer = setTimeout(done, timeoutS * 1000);
          pollers.add(wake);
          req.socket.once("close", () => {
            clearTimeout(timer);
            pollers.delete(wake);
          });
          return;
        }
        case "sendMessage": {
          if (body["chat_id"] === undefined || typeof body["text"] !== "string" || body["text"] === "")
            return fail(res, 400, "Bad Request: message text is empty");
          const message: StandInMessage = {
            message_id: nextMessage++,
            chat: { id: Number(body["chat_id"]), type: "private" },
            date: Math.floor(Date.now() / 1000),
            text: body["text"],
            history: [body["text"]],
            ...(body["reply_markup"] === undefined ? {} : { reply_markup: body["reply_markup"] as StandInMessage["reply_markup"] }),
          };
          messages.push(message);
          touch();
          const { history: _h, ...wire } = message;
          return ok(res, wire);
        }
        case "editMessageText": {
          const message = messages.find((m) => m.message_id === body["message_id"] && String(m.chat.id) === String(body["chat_id"]));
          if (message === undefined) return fail(res, 400, "Bad Request: message to edit not found");
          if (typeof body["text"] !== "string" || body["text"] === "") return fail(res, 400, "Bad Request: message text is empty");
          const markup = body["reply_markup"] as StandInMessage["reply_markup"] | undefined;
          if (message.text === body["text"] && JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
            return fail(
              res,
              400,
              "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
            );
          }
          message.text = body["text"];
          message.history.push(body["text"]);
          // An edit without reply_markup removes the inline keyboard.
          if (markup === undefined) delete message.reply_markup;
          else message.reply_markup = markup;
          touch();
          const { history: _h, ...wire } = message;
          return ok(res, { ...wire, edit_date: Math.floor(Date.now() / 1000) });
        }
        case "answerCallbackQuery": {
          const id = body["callback_query_id"];
          if (typeof id !== "string" || !callbackAnswers.has(id))
            return fail(res, 400, "Bad Request: query is too old and response timeout expired or query ID is invalid");
          callbackAnswers.set(id, typeof body["text"] === "string" ? body["text"] : undefined);
          touch();
          return ok(res, true);
        }
        default:
          return fail(res, 404, "Not Found");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiRoot,
    messages,
    calls,
    callbackAnswers,
    press(chatId, messageId, data, from = { id: chatId, username: "ana" }) {
      const id = String(nextQuery++);
      callbackAnswers.set(id, undefined);
      const message = messages.find((m) => m.message_id === messageId);
      updates.push({
        update_id: nextUpdate++,
        callback_query: {
          id,
          from: { id: from.id, is_bot: false, first_name: "Ana", ...(from.username === undefined ? {} : { username: from.username }) },
          chat_instance: "ci-1",
          data,
          message: { message_id: messageId, date: message?.date ?? 0, chat: { id: chatId, type: "private" }, text: message?.text ?? "" },
        },
      });
      touch();
      return id;
    },
    until(probe, what, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const value = probe();
          if (value === undefined) return;
          clearTimeout(timer);
          changed.delete(check);
          resolve(value);
        };
        const timer = setTimeout(() => {
          changed.delete(check);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${what}; messages: ${JSON.stringify(messages.map((m) => m.history))}; calls: ${calls.map((c) => c.method).join(",")}`,
            ),
          );
        }, timeoutMs);
        changed.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        for (const wake of [...pollers]) wake();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
