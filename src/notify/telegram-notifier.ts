/**
 * `serve --telegram-bot-token-file F --telegram-chat ID`: a Telegram bot
 * (grammY's Bot API client) that posts each interaction that needs a person
 * to one chat with inline buttons — Approve / Deny for a permission, one
 * button per option for a question — answers a button press through serve,
 * and edits every message it posted for an interaction once that interaction
 * is resolved, wherever it was answered.
 *
 * Only the configured chat is obeyed: a press from any other chat is told so
 * and does nothing. Updates come by long polling `getUpdates` (no webhook, so
 * serve needs no public address); the bot uses only `getUpdates`,
 * `sendMessage`, `editMessageText` and `answerCallbackQuery`.
 *
 * Message text is plain (no parse mode), so nothing agy asks can inject
 * formatting. Every message the bot posts gets its own random binding (96
 * bits, base64url): its buttons carry it (`a:<binding>`, `d:<binding>`,
 * `o:<binding>:2`, within Telegram's 64-byte callback data), and it names the
 * interaction, this run of the bot, and the message and chat it was sent in.
 * A press counts only when the binding is live and the press comes from that
 * very message: a button left in the chat by an earlier run, one of a
 * resolved interaction, a used one, or data copied onto another message is
 * answered "This request is no longer open." (and its message loses its
 * buttons), never matched by position. Interaction ids stay out of the chat's
 * buttons.
 *
 * With learned rules (serve `--policy`, {@link TelegramNotifierOptions.rules})
 * a permission's message also shows the rules a press may save, exactly as
 * they will be saved ("Always allow: `npm test` (this workspace)"), with an
 * "Always allow" / "Always deny" row (`A:<binding>`, `D:<binding>`, the same
 * one-use binding). Such a press answers, and once the answer was delivered
 * saves that rule (addedBy `telegram:<user>`), once; the message then says
 * "Approved; rule saved: …".
 */
import { randomBytes } from "node:crypto";
import { Api } from "grammy";
import type { InlineKeyboardButton, Update } from "grammy/types";
import { sleep } from "../util/sleep.js";
import type { AnswerInteraction, AnswerOutcome, InteractionAction, Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
import { REMEMBER_LABELS, ruleSavedText, type OfferedRule, type RuleOffers } from "./rule-offer.js";

export interface TelegramNotifierOptions {
  token: string;
  /** The one chat posted to and obeyed (a user id, a group id, or `@channel`). */
  chatId: string;
  answer: AnswerInteraction;
  /** The Bot API root (default `https://api.telegram.org`); tests point it at a stand-in. */
  apiRoot?: string;
  /** Seconds a `getUpdates` long poll waits (default 25). */
  pollTimeoutS?: number;
  /** Told about failures, one sentence each (never the token). */
  onProblem?: (message: string) => void;
  /** Waits between failed polls; default a timer. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The rules a press may save with its answer; given only by a serve that keeps learned rules (`--policy`). */
  rules?: RuleOffers;
}

interface Posted {
  notice: PendingNotice;
  /** Message ids, as the sends settle (a reminder is a second message). */
  messages: Promise<number | undefined>[];
  /** The bindings of this interaction's messages (one per message). */
  bindings: Set<string>;
  done: boolean;
  /** The rules its buttons offer (none without learned rules). */
  offers: readonly OfferedRule[];
  /** A remembering press being answered: settles with the line the final edit says about the rule. */
  remembering?: Promise<string | undefined>;
}

/** One posted message's buttons: valid for that message, in that chat, once. */
interface Binding {
  posted: Posted;
  /** Set once sendMessage answered; a press before that (impossible in practice) is refused. */
  messageId?: number;
  /** True while a press is being answered, and for good once it was delivered. */
  used: boolean;
}

/** What a stale, used or unknown button is told. */
export const NO_LONGER_OPEN = "This request is no longer open.";

const BINDING_PATTERN = /^[A-Za-z0-9_-]{16}$/;

/** The press's answer, and the rule it also saves (`A:` / `D:`). */
interface Pressed {
  action: InteractionAction;
  remember?: OfferedRule;
}

/** The remember row: `A:<binding>` saves the Always allow rule, `D:<binding>` the Always deny one. */
function rememberRow(offers: readonly OfferedRule[], binding: string): InlineKeyboardButton[][] {
  if (offers.length === 0) return [];
  return [offers.map((offer) => ({ text: REMEMBER_LABELS[offer.decision], callback_data: `${offer.decision === "approve" ? "A" : "D"}:${binding}` }))];
}

/** Saves the pressed rule after a delivered answer: the reply, and the line the final edit adds. */
async function saveRule(offer: OfferedRule, who: string): Promise<{ reply: string; line: string }> {
  try {
    await offer.save(who);
    const saved = ruleSavedText(offer.decision, offer);
    return { reply: saved, line: `${saved}. Decided by ${who}.` };
  } catch (error) {
    const reason = `the rule was not saved: ${error instanceof Error ? error.message : String(error)}`;
    return { reply: `Sent to agy, but ${reason}`, line: `${outcomeText(offer.decision === "approve" ? "approved" : "denied", who)}; ${reason}` };
  }
}

/** The rules a press may save, as they will be saved (none when `rules` offers none or fails). */
function offersOf(rules: RuleOffers | undefined, notice: PendingNotice, problem: (what: string, error: unknown) => void): readonly OfferedRule[] {
  if (rules === undefined || notice.request.kind !== "permission") return [];
  try {
    return rules(notice);
  } catch (error) {
    problem(`no rule could be offered for interaction ${notice.interactionId}`, error);
    return [];
  }
}

/** A message's buttons: Approve / Deny (and the remember row) for a permission, one per option for a single question. */
function keyboardOf(posted: Posted, binding: string): InlineKeyboardButton[][] {
  const request = posted.notice.request;
  if (request.kind === "permission") {
    return [
      [
        { text: "Approve", callback_data: `a:${binding}` },
        { text: "Deny", callback_data: `d:${binding}` },
      ],
      ...rememberRow(posted.offers, binding),
    ];
  }
  if (request.kind === "question" && request.questions.length === 1) {
    // One option per row: option texts are often long.
    return (request.questions[0]?.options ?? [])
      .slice(0, 20)
      .map((option, index) => [{ text: option.text.slice(0, 60), callback_data: `o:${binding}:${index}` }]);
  }
  return [];
}

/** A posted message's text (plain: no parse mode). */
function messageText(notice: PendingNotice, offers: readonly OfferedRule[]): string {
  const lines = [
    notice.escalated ? `Still waiting: ${noticeTitle(notice.request)}` : noticeTitle(notice.request),
    "",
    noticeBody(notice.request),
    "",
    ...(offers.length === 0 ? [] : [...offers.map((offer) => offer.text), ""]),
    `on ${notice.host}`,
  ];
  if (notice.request.kind === "question" && notice.request.questions.length > 1) lines.push("Several questions: answer them on the page.");
  else if (notice.request.kind === "question" && notice.request.questions[0]?.multiSelect === true)
    lines.push("A button answers with that one option; to choose several, open the card.");
  if (notice.escalation !== undefined) lines.push(notice.escalation);
  lines.push(notice.url);
  return lines.join("\n");
}

/** A resolved interaction's message: what was asked, and how it ended (or what the remembering press said). */
function finalText(notice: ResolvedNotice, line: string | undefined): string {
  return [noticeTitle(notice.request), "", noticeBody(notice.request), "", line ?? `${outcomeText(notice.outcome, notice.decidedBy)}.`].join("\n");
}

/** What a button's callback data answers, for the message it was posted in (undefined: nothing it may answer). */
function pressedOf(posted: Posted, data: string): Pressed | undefined {
  const [verb, , index] = data.split(":");
  if (verb === "a") return { action: { action: "approve" } };
  if (verb === "d") return { action: { action: "deny" } };
  if (verb === "A" || verb === "D") {
    const decision = verb === "A" ? "approve" : "deny";
    const remember = posted.offers.find((offer) => offer.decision === decision);
    return remember === undefined ? undefined : { action: { action: decision }, remember };
  }
  const request = posted.notice.request;
  if (verb === "o" && request.kind === "question") {
    const option = request.questions[0]?.options[Number(index)];
    if (option !== undefined) return { action: { action: "answer", optionIds: [option.id] } };
  }
  return undefined;
}

/** Whether a press came from the configured chat (its id, or `@username` for a channel). */
function fromConfiguredChat(query: CallbackQuery, chatId: string): boolean {
  const chat = query.message?.chat;
  return chat !== undefined && (String(chat.id) === chatId || ("username" in chat && chat.username !== undefined && `@${chat.username}` === chatId));
}

/** The press's reply for serve's answer. */
function replyOf(outcome: AnswerOutcome): string {
  if (outcome.result === "delivered") return "Sent to agy.";
  if (outcome.result === "already_resolved") return "It was already answered elsewhere.";
  return `Not delivered: ${outcome.reason ?? outcome.result}`;
}

type CallbackQuery = NonNullable<Update["callback_query"]>;
type CallbackMessage = NonNullable<CallbackQuery["message"]>;

export function createTelegramNotifier(options: TelegramNotifierOptions): Notifier {
  return new TelegramNotifier(options);
}

class TelegramNotifier implements Notifier {
  readonly name = "telegram";
  readonly #options: TelegramNotifierOptions;
  readonly #api: Api;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #lifetime = new AbortController();
  // grammY types its signal parameter with its Node shim's AbortSignal; the platform's is what it uses at run time.
  readonly #signal = this.#lifetime.signal as unknown as Parameters<Api["getUpdates"]>[1];
  readonly #byInteraction = new Map<string, Posted>();
  readonly #byBinding = new Map<string, Binding>();
  readonly #polling: Promise<void>;

  constructor(options: TelegramNotifierOptions) {
    this.#options = options;
    this.#api = new Api(options.token, { ...(options.apiRoot === undefined ? {} : { apiRoot: options.apiRoot }), fetch: globalThis.fetch as never });
    this.#sleep = options.sleep ?? ((ms, signal) => sleep(ms, signal));
    this.#polling = this.#poll();
  }

  pending(notice: PendingNotice): void {
    let posted = this.#byInteraction.get(notice.interactionId);
    if (posted === undefined) {
      posted = { notice, messages: [], bindings: new Set(), done: false, offers: offersOf(this.#options.rules, notice, this.#problem) };
      this.#byInteraction.set(notice.interactionId, posted);
    }
    if (posted.done) return;
    posted.messages.push(this.#send(posted, notice));
  }

  resolved(notice: ResolvedNotice): void {
    const posted = this.#byInteraction.get(notice.interactionId);
    if (posted === undefined) return;
    posted.done = true;
    this.#byInteraction.delete(notice.interactionId);
    // Its buttons answer nothing from now on.
    for (const id of posted.bindings) this.#byBinding.delete(id);
    const saying = posted.remembering ?? Promise.resolve(undefined);
    for (const message of posted.messages) {
      void Promise.all([message, saying])
        .then(async ([id, line]) => {
          // Without reply_markup the edit also removes the buttons.
          if (id !== undefined) await this.#api.editMessageText(this.#options.chatId, id, finalText(notice, line), {}, this.#signal);
        })
        .catch((error: unknown) => this.#problem(`editing the message of interaction ${notice.interactionId} failed`, error));
    }
  }

  async close(): Promise<void> {
    this.#lifetime.abort();
    await this.#polling.catch(() => undefined);
  }

  readonly #problem = (what: string, error: unknown): void => {
    // grammY's errors name the method and Telegram's description, never the token.
    const detail = error instanceof Error ? error.message.replaceAll(this.#options.token, "<token>") : String(error);
    this.#options.onProblem?.(`telegram: ${what}: ${detail}`);
  };

  async #send(posted: Posted, notice: PendingNotice): Promise<number | undefined> {
    // 12 random bytes: 16 base64url characters, unguessable and well within the 64-byte callback data.
    const id = randomBytes(12).toString("base64url");
    const binding: Binding = { posted, used: false };
    this.#byBinding.set(id, binding);
    posted.bindings.add(id);
    // Bounded: interactions never resolved (a session that vanished) cannot grow it without end.
    while (this.#byBinding.size > 10_000) this.#byBinding.delete(this.#byBinding.keys().next().value as string);
    const buttons = keyboardOf(posted, id);
    for (let attempt = 1; attempt <= 3 && !this.#lifetime.signal.aborted; attempt++) {
      try {
        const message = await this.#api.sendMessage(
          this.#options.chatId,
          messageText(notice, posted.offers),
          buttons.length === 0 ? {} : { reply_markup: { inline_keyboard: buttons } },
          this.#signal,
        );
        binding.messageId = message.message_id;
        return message.message_id;
      } catch (error) {
        if (attempt === 3) this.#problem(`posting interaction ${notice.interactionId} failed`, error);
        else await this.#sleep(1000 * attempt, this.#lifetime.signal);
      }
    }
    return undefined;
  }

  async #onCallback(query: CallbackQuery): Promise<void> {
    if (!fromConfiguredChat(query, this.#options.chatId)) {
      await this.#api.answerCallbackQuery(query.id, { text: "This bot does not take answers from this chat." }, this.#signal);
      return;
    }
    const data = query.data ?? "";
    const id = data.split(":")[1] ?? "";
    const binding = BINDING_PATTERN.test(id) ? this.#byBinding.get(id) : undefined;
    const pressed = binding === undefined ? undefined : pressedOf(binding.posted, data);
    // The press must come from the very message the binding was sent in (its chat was checked above).
    const sameMessage = binding?.messageId !== undefined && query.message?.message_id === binding.messageId;
    if (binding === undefined || pressed === undefined || !sameMessage || binding.used || binding.posted.done) {
      await this.#api.answerCallbackQuery(query.id, { text: NO_LONGER_OPEN }, this.#signal);
      // A button of an earlier run (or a forged one) stays in the chat otherwise: take it away.
      // (Not a message of ours that is still open: forged data pressed there must not take its live buttons.)
      const message = query.message;
      if (binding === undefined && message !== undefined && ![...this.#byBinding.values()].some((b) => b.messageId === message.message_id))
        await this.#retire(message);
      return;
    }
    const reply = await this.#answerPress(binding, pressed, `telegram:${query.from.username ?? query.from.id}`);
    await this.#api.answerCallbackQuery(query.id, { text: reply.slice(0, 200) }, this.#signal);
  }

  /** Answers a live press through serve (and saves its rule once delivered): the press's reply. */
  async #answerPress(binding: Binding, pressed: Pressed, who: string): Promise<string> {
    const posted = binding.posted;
    binding.used = true;
    let reply: string;
    let final = true;
    let settle: ((line: string | undefined) => void) | undefined;
    // The final edit waits for the rule to be saved (or not), so it can say which.
    if (pressed.remember !== undefined) posted.remembering = new Promise((resolve) => (settle = resolve));
    let line: string | undefined;
    try {
      const outcome = await this.#options.answer(posted.notice.conversationId, posted.notice.interactionId, pressed.action, who);
      reply = replyOf(outcome);
      if (outcome.result === "delivered" && pressed.remember !== undefined) ({ reply, line } = await saveRule(pressed.remember, who));
    } catch (error) {
      reply = `Not delivered: ${error instanceof Error ? error.message : String(error)}`;
      final = false;
    }
    settle?.(line);
    // The answer failed (agy unreachable a moment): the same button may be pressed again while the interaction is open.
    if (!final && !posted.done) binding.used = false;
    return reply;
  }

  /** Edits a message whose buttons no longer answer anything: it says so, and loses them. */
  async #retire(message: CallbackMessage): Promise<void> {
    const before = "text" in message && typeof message.text === "string" ? message.text : "";
    if (before.endsWith(NO_LONGER_OPEN)) return;
    await this.#api
      .editMessageText(this.#options.chatId, message.message_id, before === "" ? NO_LONGER_OPEN : `${before}\n\n${NO_LONGER_OPEN}`, {}, this.#signal)
      .catch((error: unknown) => this.#problem("taking the buttons off an old message failed", error));
  }

  /** Long-polls `getUpdates` for button presses until closed, backing off while it fails. */
  async #poll(): Promise<void> {
    let offset: number | undefined;
    let failures = 0;
    while (!this.#lifetime.signal.aborted) {
      let updates: Update[];
      try {
        updates = await this.#api.getUpdates(
          { timeout: this.#options.pollTimeoutS ?? 25, allowed_updates: ["callback_query"], ...(offset === undefined ? {} : { offset }) },
          this.#signal,
        );
        failures = 0;
      } catch (error) {
        if (this.#lifetime.signal.aborted) return;
        failures += 1;
        if (failures === 1 || failures % 20 === 0) this.#problem("polling for button presses failed; retrying", error);
        await this.#sleep(Math.min(30_000, 1000 * 2 ** Math.min(failures - 1, 5)), this.#lifetime.signal);
        continue;
      }
      for (const update of updates) {
        offset = update.update_id + 1;
        if (update.callback_query !== undefined)
          await this.#onCallback(update.callback_query).catch((error: unknown) => this.#problem("answering a button press failed", error));
      }
    }
  }
}
