/**
 * The Telegram bot against a Bot API stand-in on loopback: it posts with
 * buttons, answers a press through serve's callback, obeys only its chat,
 * and edits its message when the interaction is resolved anywhere.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readFile } from "node:fs/promises";
import type { AnswerInteraction, InteractionAction, Notifier } from "../../src/notify/index.js";
import type { RuleOffers } from "../../src/notify/rule-offer.js";
import { createTelegramNotifier, NO_LONGER_OPEN } from "../../src/notify/telegram-notifier.js";
import { permissionNotice, questionNotice, resolvedOf } from "./support/notices.js";
import { startLearnedWorld } from "./support/learned-world.js";
import { startTelegramStandIn, type TelegramStandIn } from "./support/telegram-stand-in.js";

const TOKEN = "123456:test-token-ABC";
const CHAT = 4242;
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface Answered {
  conversationId: string;
  interactionId: string;
  action: InteractionAction;
  decidedBy: string;
}

async function world(result: "delivered" | "already_resolved" = "delivered", rules?: RuleOffers) {
  const api: TelegramStandIn = await startTelegramStandIn(TOKEN);
  cleanup.push(() => api.close());
  const answered: Answered[] = [];
  const problems: string[] = [];
  const answer: AnswerInteraction = async (conversationId, interactionId, action, decidedBy) => {
    answered.push({ conversationId, interactionId, action, decidedBy });
    return { result };
  };
  const bot: Notifier = createTelegramNotifier({
    token: TOKEN,
    chatId: String(CHAT),
    answer,
    apiRoot: api.apiRoot,
    pollTimeoutS: 1,
    onProblem: (m) => problems.push(m),
    ...(rules === undefined ? {} : { rules }),
  });
  cleanup.push(() => bot.close());
  return { api, bot, answered, problems };
}

describe("the Telegram bot", () => {
  it("posts a permission with Approve and Deny, and a press answers it through serve as the user", async () => {
    const { api, bot, answered } = await world();
    bot.pending(permissionNotice());
    const message = await api.until(() => api.messages[0], "the message");
    expect(String(message.chat.id)).toBe(String(CHAT));
    expect(message.text).toContain("agy asks to run a command");
    expect(message.text).toContain("npm test");
    expect(message.text).toContain("http://127.0.0.1:7878/#/interactions/int_0123456789abcdef");
    const buttons = message.reply_markup!.inline_keyboard.flat();
    // No learned rules (serve without --policy): nothing to remember, no such button.
    expect(buttons.map((b) => b.text)).toEqual(["Approve", "Deny"]);
    expect(message.text).not.toContain("Always");
    const press = api.press(CHAT, message.message_id, buttons[0]!.callback_data!);
    await api.until(() => api.callbackAnswers.get(press), "the press to be answered");
    expect(answered).toEqual([{ conversationId: "conv-1", interactionId: "int_0123456789abcdef", action: { action: "approve" }, decidedBy: "telegram:ana" }]);
    expect(api.callbackAnswers.get(press)).toBe("Sent to agy.");
  });

  it("offers a question's options as buttons and answers with the option pressed", async () => {
    const { api, bot, answered } = await world();
    bot.pending(questionNotice());
    const message = await api.until(() => api.messages[0], "the message");
    const buttons = message.reply_markup!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(["Postgres", "SQLite"]);
    const press = api.press(CHAT, message.message_id, buttons[1]!.callback_data!);
    await api.until(() => api.callbackAnswers.get(press), "the press to be answered");
    expect(answered.map((a) => a.action)).toEqual([{ action: "answer", optionIds: ["2"] }]);
  });

  it("says that a button picks one option when the question takes several, and gives several questions no buttons", async () => {
    const { api, bot } = await world();
    bot.pending(
      questionNotice({
        interactionId: "int_multi",
        request: {
          kind: "question",
          questions: [
            {
              question: "Which checks?",
              multiSelect: true,
              options: [
                { id: "1", text: "lint" },
                { id: "2", text: "test" },
              ],
            },
          ],
        },
      }),
    );
    bot.pending(
      questionNotice({
        interactionId: "int_two",
        request: {
          kind: "question",
          questions: [
            { question: "One?", multiSelect: false, options: [{ id: "1", text: "a" }] },
            { question: "Two?", multiSelect: false, options: [{ id: "1", text: "b" }] },
          ],
        },
      }),
    );
    await api.until(() => (api.messages.length === 2 ? true : undefined), "two messages");
    const multi = api.messages.find((m) => m.text.includes("Which checks?"))!;
    const two = api.messages.find((m) => m.text.includes("One?"))!;
    expect(multi.text).toContain("A button answers with that one option; to choose several, open the card.");
    expect(multi.reply_markup!.inline_keyboard.flat().map((b) => b.text)).toEqual(["lint", "test"]);
    expect(two.text).toContain("Several questions: answer them on the page.");
    expect(two.reply_markup).toBeUndefined();
  });

  it("ignores a press from any other chat, and says so", async () => {
    const { api, bot, answered } = await world();
    bot.pending(permissionNotice());
    const message = await api.until(() => api.messages[0], "the message");
    const press = api.press(999, message.message_id, message.reply_markup!.inline_keyboard[0]![0]!.callback_data!, { id: 999, username: "mallory" });
    expect(await api.until(() => api.callbackAnswers.get(press), "the refusal")).toBe("This bot does not take answers from this chat.");
    expect(answered).toEqual([]);
  });

  it("edits its message, buttons removed, when the interaction is resolved elsewhere; a later press does nothing", async () => {
    const { api, bot, answered } = await world();
    const notice = permissionNotice();
    bot.pending(notice);
    const message = await api.until(() => api.messages[0], "the message");
    const data = message.reply_markup!.inline_keyboard[0]![0]!.callback_data!;
    bot.resolved(resolvedOf(notice, "denied", "page"));
    await api.until(() => (message.history.length === 2 ? true : undefined), "the edit");
    expect(message.text).toContain("Denied by page.");
    expect(message.reply_markup).toBeUndefined();
    const press = api.press(CHAT, message.message_id, data);
    expect(await api.until(() => api.callbackAnswers.get(press), "the answer to a late press")).toBe(NO_LONGER_OPEN);
    expect(answered).toEqual([]);
  });

  it("tells the person when another channel answered first", async () => {
    const { api, bot } = await world("already_resolved");
    bot.pending(permissionNotice());
    const message = await api.until(() => api.messages[0], "the message");
    const press = api.press(CHAT, message.message_id, message.reply_markup!.inline_keyboard[0]![1]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(press), "the answer")).toBe("It was already answered elsewhere.");
  });

  it("uses only getUpdates, sendMessage, editMessageText and answerCallbackQuery", async () => {
    const { api, bot } = await world();
    const notice = permissionNotice();
    bot.pending(notice);
    const message = await api.until(() => api.messages[0], "the message");
    const press = api.press(CHAT, message.message_id, message.reply_markup!.inline_keyboard[0]![0]!.callback_data!);
    await api.until(() => api.callbackAnswers.get(press), "the press to be answered");
    bot.resolved(resolvedOf(notice, "approved", "telegram:ana"));
    await api.until(() => (message.history.length === 2 ? true : undefined), "the edit");
    expect(new Set(api.calls.map((c) => c.method))).toEqual(new Set(["getUpdates", "sendMessage", "editMessageText", "answerCallbackQuery"]));
  });

  it("never lets a button of an earlier run answer the interaction at the same position now, and takes the old buttons away", async () => {
    const { api, bot: first, answered } = await world();
    first.pending(permissionNotice({ interactionId: "int_yesterday", request: { kind: "permission", action: "command", target: "pwd", description: "" } }));
    const old = await api.until(() => api.messages[0], "the first run's message");
    const oldData = old.reply_markup!.inline_keyboard[0]![0]!.callback_data!;
    await first.close();
    // serve restarted: a new bot with fresh state posts the first interaction of its run.
    const second = createTelegramNotifier({
      token: TOKEN,
      chatId: String(CHAT),
      answer: async (conversationId, interactionId, action, decidedBy) => {
        answered.push({ conversationId, interactionId, action, decidedBy });
        return { result: "delivered" };
      },
      apiRoot: api.apiRoot,
      pollTimeoutS: 1,
    });
    cleanup.push(() => second.close());
    second.pending(
      permissionNotice({ interactionId: "int_today", request: { kind: "permission", action: "command", target: "rm -rf build", description: "" } }),
    );
    const today = await api.until(() => api.messages[1], "the second run's message");
    const todayData = today.reply_markup!.inline_keyboard[0]![0]!.callback_data!;
    expect(todayData).not.toBe(oldData);
    expect(Buffer.byteLength(todayData)).toBeLessThanOrEqual(64);
    const stale = api.press(CHAT, old.message_id, oldData);
    expect(await api.until(() => api.callbackAnswers.get(stale), "the answer to yesterday's button")).toBe(NO_LONGER_OPEN);
    await api.until(() => (old.history.length === 2 ? true : undefined), "the old message's edit");
    expect(old.text.endsWith(NO_LONGER_OPEN)).toBe(true);
    expect(old.reply_markup).toBeUndefined();
    expect(answered).toEqual([]);
    // Today's button still works.
    const right = api.press(CHAT, today.message_id, todayData);
    expect(await api.until(() => api.callbackAnswers.get(right), "the answer to today's button")).toBe("Sent to agy.");
    expect(answered.map((a) => [a.interactionId, a.action])).toEqual([["int_today", { action: "approve" }]]);
  });

  it("refuses a replayed button, and a button's data pressed on another message", async () => {
    const { api, bot, answered } = await world();
    bot.pending(permissionNotice({ interactionId: "int_a" }));
    bot.pending(permissionNotice({ interactionId: "int_b", request: { kind: "permission", action: "command", target: "make deploy", description: "" } }));
    await api.until(() => (api.messages.length === 2 ? true : undefined), "two messages");
    const a = api.messages.find((m) => m.text.includes("npm test"))!;
    const b = api.messages.find((m) => m.text.includes("make deploy"))!;
    const aApprove = a.reply_markup!.inline_keyboard[0]![0]!.callback_data!;
    // A's data on B's message: bound to A's message, so it answers neither.
    const moved = api.press(CHAT, b.message_id, aApprove);
    expect(await api.until(() => api.callbackAnswers.get(moved), "the answer to moved data")).toBe(NO_LONGER_OPEN);
    expect(answered).toEqual([]);
    const first = api.press(CHAT, a.message_id, aApprove);
    expect(await api.until(() => api.callbackAnswers.get(first), "the first press")).toBe("Sent to agy.");
    const replay = api.press(CHAT, a.message_id, aApprove);
    expect(await api.until(() => api.callbackAnswers.get(replay), "the replayed press")).toBe(NO_LONGER_OPEN);
    const deny = api.press(CHAT, a.message_id, a.reply_markup!.inline_keyboard[0]![1]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(deny), "the other button of the used message")).toBe(NO_LONGER_OPEN);
    expect(answered.map((x) => x.interactionId)).toEqual(["int_a"]);
    // A made-up binding of the right shape is unknown too.
    const forged = api.press(CHAT, b.message_id, "a:AAAAAAAAAAAAAAAA");
    expect(await api.until(() => api.callbackAnswers.get(forged), "the forged press")).toBe(NO_LONGER_OPEN);
    expect(answered.map((x) => x.interactionId)).toEqual(["int_a"]);
    // B is still open: its buttons stay, and work.
    expect(b.history).toHaveLength(1);
    const right = api.press(CHAT, b.message_id, b.reply_markup!.inline_keyboard[0]![1]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(right), "B's own button")).toBe("Sent to agy.");
    expect(answered.map((x) => [x.interactionId, x.action.action])).toEqual([
      ["int_a", "approve"],
      ["int_b", "deny"],
    ]);
  });

  it("offers Always allow and Always deny with the rule shown as it will be saved; a press answers, saves it once, and the next identical request is decided by it", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { api, bot, answered } = await world("delivered", learned.offers);
    const notice = permissionNotice();
    bot.pending(notice);
    const message = await api.until(() => api.messages[0], "the message");
    expect(message.text).toContain("Always allow: `npm test` (this workspace)");
    expect(message.text).toContain("Always deny: `npm test` (this workspace)");
    const rows = message.reply_markup!.inline_keyboard;
    expect(rows.map((row) => row.map((b) => b.text))).toEqual([
      ["Approve", "Deny"],
      ["Always allow", "Always deny"],
    ]);
    expect(learned.decideCommand("npm test")).toMatchObject({ decision: "ask" });
    const press = api.press(CHAT, message.message_id, rows[1]![0]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(press), "the press to be answered")).toBe(
      "Approved; rule saved: Always allow: `npm test` (this workspace)",
    );
    expect(answered).toEqual([{ conversationId: "conv-1", interactionId: "int_0123456789abcdef", action: { action: "approve" }, decidedBy: "telegram:ana" }]);
    const [rule] = learned.store.list();
    expect(learned.store.list()).toHaveLength(1);
    expect(rule).toMatchObject({ decision: "approve", match: "npm test", scope: "workspace", addedBy: "telegram:ana", fromRequest: "int_0123456789abcdef" });
    expect(await readFile(learned.store.file, "utf8")).toContain(rule!.id);
    expect(learned.decideCommand("npm test")).toMatchObject({ decision: "approve", rule: rule!.id });
    expect(learned.decideCommand("npm test -- --watch")).toMatchObject({ decision: "ask" });
    // A replay of the press neither answers nor saves again.
    const replay = api.press(CHAT, message.message_id, rows[1]![0]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(replay), "the replayed press")).toBe(NO_LONGER_OPEN);
    expect(learned.store.list()).toHaveLength(1);
    bot.resolved(resolvedOf(notice, "approved", "telegram:ana"));
    await api.until(() => (message.history.length === 2 ? true : undefined), "the edit");
    expect(message.text).toContain("Approved; rule saved: Always allow: `npm test` (this workspace). Decided by telegram:ana.");
    expect(message.reply_markup).toBeUndefined();
  });

  it("offers only Always deny for a request no rule may allow, and saves the deny rule", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { api, bot, answered } = await world("delivered", learned.offers);
    bot.pending(permissionNotice({ request: { kind: "permission", action: "command", target: "eval foo", description: "" } }));
    const message = await api.until(() => api.messages[0], "the message");
    expect(message.text).toContain("Always deny: `eval foo` (this workspace)");
    expect(message.text).not.toContain("Always allow");
    const rows = message.reply_markup!.inline_keyboard;
    expect(rows.map((row) => row.map((b) => b.text))).toEqual([["Approve", "Deny"], ["Always deny"]]);
    const press = api.press(CHAT, message.message_id, rows[1]![0]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(press), "the press")).toBe("Denied; rule saved: Always deny: `eval foo` (this workspace)");
    expect(answered.map((a) => a.action)).toEqual([{ action: "deny" }]);
    expect(learned.store.list()).toMatchObject([{ decision: "deny", match: "eval foo", addedBy: "telegram:ana" }]);
    expect(learned.decideCommand("eval foo")).toMatchObject({ decision: "deny" });
  });

  it("saves no rule when the remembering press was not the answer delivered", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { api, bot } = await world("already_resolved", learned.offers);
    bot.pending(permissionNotice());
    const message = await api.until(() => api.messages[0], "the message");
    const press = api.press(CHAT, message.message_id, message.reply_markup!.inline_keyboard[1]![0]!.callback_data!);
    expect(await api.until(() => api.callbackAnswers.get(press), "the press")).toBe("It was already answered elsewhere.");
    expect(learned.store.list()).toEqual([]);
  });

  it("offers nothing to remember for a question", async () => {
    const learned = await startLearnedWorld();
    cleanup.push(() => learned.close());
    const { api, bot } = await world("delivered", learned.offers);
    bot.pending(questionNotice());
    const message = await api.until(() => api.messages[0], "the message");
    expect(message.reply_markup!.inline_keyboard.flat().map((b) => b.text)).toEqual(["Postgres", "SQLite"]);
    expect(message.text).not.toContain("Always");
  });
});
