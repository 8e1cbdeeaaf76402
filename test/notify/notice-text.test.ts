/** A notification's title names what agy wants and the session's `waitingFor` word. */
import { describe, expect, it } from "vitest";
import { noticeTitle } from "../../src/notify/notice-text.js";

describe("notification titles", () => {
  it.each([
    [{ kind: "permission", variant: "runCommand", action: "command", target: "npm test", description: "" }, "agy asks to run a command · permission"],
    [{ kind: "permission", variant: "filePermission", action: "file", target: "file:///w/a.txt", description: "" }, "agy asks to change a file · file"],
    [{ kind: "permission", action: "browser", target: "https://example.com", description: "" }, "agy asks permission: browser · permission"],
    [{ kind: "question", questions: [{ question: "Which?", options: [], multiSelect: false }] }, "agy asks a question · question"],
    [{ kind: "other", variant: "elicitation", spec: {} }, "agy waits in its TUI (elicitation) · tui_prompt"],
  ] as const)("titles %j as %s", (request, title) => {
    expect(noticeTitle(request as Parameters<typeof noticeTitle>[0])).toBe(title);
  });
});
