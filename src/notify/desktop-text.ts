/**
 * The words of a desktop alert (`--notify-desktop`): a title naming the
 * session and what it waits for, and a short body with the command, file or
 * question. Desktop notification servers draw both as they are, and some
 * read the body as markup (the freedesktop `body-markup` capability), so
 * the text is stripped of control and bidi characters, bounded, and
 * escaped when the server reads markup.
 */
import { type InteractionRequest, type WaitingFor, waitingForRequest } from "../mapper/index.js";
import type { PendingNotice } from "./notice.js";
import { noticeBody } from "./notice-text.js";

/** What a session waits for: the `waitingFor` of its `status` event (docs/events.md). */
export type WaitingKind = WaitingFor;

/** A desktop bubble shows a few lines; the rest is on the page or in the TUI. */
export const MAX_DESKTOP_BODY = 400;
const MAX_BODY_LINES = 8;
const MAX_TITLE = 120;

/** Where a person can answer besides the alert itself: serve's page, or agy's TUI and the CLI (watch). */
export type AnswerPlace = "page" | "cli";

export interface DesktopTextOptions {
  /** The notification server offers action buttons (Approve / Deny are on the alert). */
  actions: boolean;
  /** The server reads the body as markup: `&`, `<`, `>` are escaped. */
  markup: boolean;
  answerOn: AnswerPlace;
  /** The conversation's workspace, when known: file paths are shown relative to it. */
  workspace?: string | undefined;
}

// C0 (but line feed), DEL, C1; line/paragraph separators; zero-width and bidi marks, embeddings, overrides, isolates.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/gu;

/** `text` without characters that could disguise it on a desktop; tabs become spaces. */
export function desktopSafe(text: string, options: { keepNewlines?: boolean } = {}): string {
  const cleaned = text.replace(CONTROL, (char) => (char === "\t" ? " " : ""));
  return options.keepNewlines === true ? cleaned : cleaned.replace(/\n+/g, " ");
}

/** The `waitingFor` word of a request, as every front door says it. */
export function waitingKind(request: InteractionRequest): WaitingKind {
  return waitingForRequest(request);
}

/** The last part of a workspace path (`/home/ana/my-app` → `my-app`). */
function workspaceName(workspace: string): string {
  const parts = workspace.replace(/\/+$/, "").split("/");
  return parts[parts.length - 1] || workspace;
}

/** `agy 1a2b3c4d in my-app: permission`; `Still waiting — …` for an escalation's reminder. */
export function desktopTitle(notice: PendingNotice, workspace?: string): string {
  const short = notice.conversationId.slice(0, 8);
  const where = workspace === undefined || workspace === "" ? "" : ` in ${workspaceName(workspace)}`;
  const title = desktopSafe(`${notice.escalated ? "Still waiting — " : ""}agy ${short}${where}: ${waitingKind(notice.request)}`);
  return title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1)}…` : title;
}

/** A `file://` target as a path, relative to the workspace when it lies inside it. */
export function displayPath(target: string, workspace?: string): string {
  let path = target;
  if (/^file:\/\//i.test(target)) {
    try {
      path = decodeURIComponent(new URL(target).pathname);
    } catch {
      return target;
    }
  }
  if (workspace !== undefined && workspace !== "") {
    const root = workspace.replace(/\/+$/, "");
    if (path.startsWith(`${root}/`)) return path.slice(root.length + 1);
  }
  return path;
}

function requestText(request: InteractionRequest, workspace: string | undefined): string {
  if (request.kind === "permission" && waitingKind(request) === "file") {
    const path = displayPath(request.target, workspace);
    return request.description !== "" && request.description !== request.target ? `${path}\n${request.description}` : path;
  }
  return noticeBody(request);
}

function bounded(text: string): string {
  let lines = text.split("\n");
  if (lines.length > MAX_BODY_LINES) lines = [...lines.slice(0, MAX_BODY_LINES - 1), "…"];
  const joined = lines.join("\n");
  return joined.length > MAX_DESKTOP_BODY ? `${joined.slice(0, MAX_DESKTOP_BODY - 1)}…` : joined;
}

function hint(notice: PendingNotice, options: DesktopTextOptions): string | undefined {
  const kind = notice.request.kind;
  if (kind === "other") return undefined;
  if (kind === "permission" && options.actions) return undefined;
  const verb = kind === "question" ? "Answer it" : "Approve or deny it";
  if (options.answerOn === "page") return `${verb} on the page: ${notice.url}`;
  return `${verb} in agy's TUI or with: agy-bridge ${kind === "question" ? "answer" : "approve"} --conversation ${notice.conversationId}`;
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The command line, file or question (bounded), then where else to answer it, then the escalation's warning. */
export function desktopBody(notice: PendingNotice, options: DesktopTextOptions): string {
  const parts = [bounded(desktopSafe(requestText(notice.request, options.workspace), { keepNewlines: true }))];
  const where = hint(notice, options);
  if (where !== undefined) parts.push(desktopSafe(where));
  if (notice.escalation !== undefined) parts.push(desktopSafe(notice.escalation));
  const body = parts.join("\n\n");
  return options.markup ? escapeMarkup(body) : body;
}
