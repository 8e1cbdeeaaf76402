/**
 * `agy-bridge audit`: reads the decision log (docs/policy.md) — every
 * approval, denial, answer and escalation, by policy, CLI, HTTP, the page,
 * an agent, or someone elsewhere (`observed`). `--conversation` takes the
 * start of an id the log holds (conversation-ref.ts).
 */
import { homedir } from "node:os";
import { defaultAuditPath, readAuditLog, type AuditRecord } from "../audit/index.js";
import { UsageError } from "./args.js";
import { defineCommand, type Command } from "./command.js";
import { matchConversationRef } from "./conversation-ref.js";
import { terminalText } from "./terminal-text.js";

const HELP = `Usage: agy-bridge audit [--since DURATION|TIME] [--conversation ID] [--file PATH] [--json]

Prints the audit log of decisions about agy's requests, oldest first.

Options:
  --since X         only decisions in the last DURATION (90s, 30m, 2h, 7d) or
                    since an ISO time (2026-12-01T09:00:00Z)
  --conversation ID only this conversation's decisions; the start of its id
                    (the 8 characters the table prints) will do when no other
                    conversation in the log starts the same way
  --file PATH       the log to read (default $XDG_STATE_HOME/agy-bridge/audit.jsonl,
                    else ~/.local/state/agy-bridge/audit.jsonl)
  --json            one JSON record per line, as stored
  -h, --help        show this help

Exit status: 0 (also when the log is empty or missing); 2 on a usage error
(an id's start that several conversations in the log share, named).
`;

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m` → 30 minutes before `now`; an ISO time as itself. */
export function sinceOf(value: string, now: Date): Date {
  const duration = /^(\d+)([smhd])$/.exec(value);
  if (duration !== null) return new Date(now.getTime() - Number(duration[1]) * (UNITS[duration[2] ?? "s"] ?? 1_000));
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value))) return new Date(Date.parse(value));
  throw new UsageError("--since takes a duration (90s, 30m, 2h, 7d) or an ISO time (2026-12-01T09:00:00Z)");
}

export const auditCommand: Command = defineCommand({
  name: "audit",
  summary: "read the log of decisions about agy's requests",
  help: HELP,
  options: {
    since: { type: "string" },
    conversation: { type: "string" },
    file: { type: "string" },
    json: { type: "boolean" },
  },
  async run(io, args) {
    const since = args.values.since === undefined ? undefined : sinceOf(args.values.since, new Date());
    const path = args.values.file ?? defaultAuditPath(io.env, io.env["HOME"] ?? homedir());
    const ref = args.values.conversation;
    if (ref === "") throw new UsageError("--conversation needs a non-empty value; run `agy-bridge audit --help`");
    const reading = await readAuditLog(path, since === undefined ? {} : { since });
    // The id or the start of one in the log (refused when ambiguous); an unknown one matches nothing.
    const conversationId = ref === undefined ? undefined : (matchConversationRef(ref, reading.conversationIds) ?? ref);
    const records = conversationId === undefined ? reading.records : reading.records.filter((r) => r.conversationId === conversationId);
    for (const record of records) {
      io.stdout.write(args.values.json === true ? `${JSON.stringify(record)}\n` : `${terminalText(line(record))}\n`);
    }
    for (const skip of reading.skipped) {
      io.stderr.write(`agy-bridge audit: skipped line ${skip.line} of ${skip.file}: not an audit record\n`);
    }
    if (records.length === 0 && args.values.json !== true) io.stderr.write(`agy-bridge audit: no decisions recorded in ${path}\n`);
    return 0;
  },
});

function line(record: AuditRecord): string {
  const what = record.request.commandLine ?? record.request.path ?? record.request.question ?? record.request.variant ?? "";
  const where = `${record.conversationId.slice(0, 8)}${record.stepIndex === undefined ? "" : ` step ${record.stepIndex}`}`;
  return `${record.time}  ${record.decision.padEnd(7)} ${record.decidedBy.padEnd(20)} ${record.delivery.padEnd(16)} ${where}  ${record.kind}: ${what}`;
}
