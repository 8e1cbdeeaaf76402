/**
 * `agy-bridge interrupt`: stop the agent's current work.
 */
import { recordCliAnswer } from "./cli-audit.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS } from "./args.js";
import { defineCommand } from "./command.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import type { AgySessionApi } from "../session/index.js";
import { attachFromArgs, failureText, PANE_HELP, PANE_OPTION, sessionTarget } from "./session-connect.js";

const HELP = `Usage: agy-bridge interrupt [--conversation ID] [--pane TARGET [-L NAME | -S PATH]] [--url URL] [--json]

Stops what the agent is doing: CancelCascadeSteps while it works; while a
step waits on the user (where a cancel does nothing), a deny of every waiting
step instead, closing agy's dialog with Escape in the pane (--pane, or the
one found for the agy that owns the conversation). Nothing happens when the
conversation is idle.

Options:
  --json              print the result as one JSON line: {"result":"cancelled"|"denied"|"idle", "stepIndices"?}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Exit 0 when the conversation was interrupted or already idle; 1 with one
sentence on a failure; 2 on a usage error.
`;

export const interruptCommand = defineCommand({
  name: "interrupt",
  summary: "stop the agent's current work (cancel, or deny a waiting prompt)",
  help: HELP,
  options: { ...CONNECTION_OPTIONS, ...PANE_OPTION, json: { type: "boolean" } },
  async run(io, { values }) {
    const target = await resolveConversationTarget(io, sessionTarget("interrupt", values, io.env));
    let session: AgySessionApi | undefined;
    try {
      session = await attachFromArgs(io, target, { follow: false });
      // Read first: an interrupt that denies a waiting gate is a decision for the audit log.
      const waiting = await session.pending().catch(() => []);
      const result = await session.interrupt();
      if (result.result === "denied") {
        for (const p of waiting.filter((w) => result.stepIndices.includes(w.stepIndex))) {
          await recordCliAnswer(io, {
            command: "interrupt",
            conversationId: session.conversationId,
            interactionId: p.interactionId,
            decision: "deny",
            decidedBy: "cli",
            delivery: "delivered",
            pending: p,
          });
        }
      }
      if (values.json === true) io.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        const text =
          result.result === "cancelled"
            ? "cancelled the running work"
            : result.result === "denied"
              ? `denied the waiting step${result.stepIndices.length === 1 ? "" : "s"} ${result.stepIndices.join(", ")}`
              : "the conversation is idle; nothing to interrupt";
        io.stderr.write(`agy-bridge interrupt: ${text}\n`);
      }
      return 0;
    } catch (error) {
      io.stderr.write(`${failureText("interrupt", error)}\n`);
      return 1;
    } finally {
      await session?.close();
    }
  },
});
