/** Notices as the dispatcher makes them, for channel tests. */
import type { PendingNotice, ResolvedNotice } from "../../../src/notify/index.js";

export function permissionNotice(overrides: Partial<PendingNotice> = {}): PendingNotice {
  return {
    conversationId: "conv-1",
    interactionId: "int_0123456789abcdef",
    request: { kind: "permission", action: "command", target: "npm test", description: "Running the tests" },
    url: "http://127.0.0.1:7878/#/interactions/int_0123456789abcdef",
    host: "devbox",
    escalated: false,
    ...overrides,
  };
}

export function questionNotice(overrides: Partial<PendingNotice> = {}): PendingNotice {
  return permissionNotice({
    interactionId: "int_fedcba9876543210",
    url: "http://127.0.0.1:7878/#/interactions/int_fedcba9876543210",
    request: {
      kind: "question",
      questions: [
        {
          question: "Which database?",
          multiSelect: false,
          options: [
            { id: "1", text: "Postgres" },
            { id: "2", text: "SQLite" },
          ],
        },
      ],
    },
    ...overrides,
  });
}

export function resolvedOf(notice: PendingNotice, outcome: ResolvedNotice["outcome"], decidedBy?: string): ResolvedNotice {
  const { escalated: _e, escalation: _s, ...rest } = notice;
  return { ...rest, outcome, ...(decidedBy === undefined ? {} : { decidedBy }) };
}
