/**
 * `agy-bridge watch`: follow a conversation as events.
 */
import { CONNECTION_HELP, CONNECTION_OPTIONS } from "./args.js";
import { defineCommand, type CliIo } from "./command.js";
import type { MapperEvent } from "../mapper/index.js";
import type { AgySessionApi, AttachOptions } from "../session/index.js";
import { formatEvent } from "./event-text.js";
import { attachFromArgs, failureText, PANE_HELP, PANE_OPTION, sessionTarget } from "./session-connect.js";
import { LINE_REDRAW, TERMINAL_STYLE, terminalText } from "./terminal-text.js";
import { auditLogFor, auditorFor, decisionLine, policyAttachOption, POLICY_HELP, POLICY_OPTIONS, readPolicyOption } from "./policy-options.js";
import type { SessionAuditor } from "../audit/index.js";
import { DESKTOP_HELP, DESKTOP_OPTIONS, prepareDesktop, startWatchDesktop, type WatchDesktop } from "./desktop-alerts.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import type { PolicyOutcome } from "../session/index.js";

const HELP = `Usage: agy-bridge watch [--conversation ID | --pane TARGET [-L NAME | -S PATH]] [--url URL] [--csrf-token T] [--json] [--until-idle] [--from-start] [--mode stream|poll] [--policy FILE] [--notify-desktop]

Follows an agy conversation and prints what happens: turns, the assistant's
answers, tool calls and their output, approvals and questions waiting on you
(with the interaction id to pass to approve / deny / answer), status changes.
Each transition is printed once, across stream reconnects and fallbacks.
The conversation so far comes first; the line "following <id>" marks where
the live part begins (with --json, the history_end event).

Options:
  --json              NDJSON on stdout, one event per line (docs/events.md)
  --until-idle        exit 0 when the turn in progress, or the next one, ends;
                      starts from now (the interactions open now, then live)
  --from-start        print the conversation so far first, also with --until-idle
                      (a turn that ended in it does not count); the default without it
  --mode MODE         stream (default: the stream, with snapshots and probes) or poll
${DESKTOP_HELP}
${POLICY_HELP}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Human output goes to stderr, coloured with a spinner while the agent works
when stderr is a terminal. Exit 0 on --until-idle's end or on SIGINT; 1 with
one sentence when the conversation cannot be followed, or when agy's server
is gone (it stopped answering: agy exited); 2 on a usage error.
`;

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

interface Spinner {
  line(text: string): void;
  working(on: boolean): void;
  stop(): void;
}

function createSpinner(out: NodeJS.WritableStream, tty: boolean): Spinner {
  let frame = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const clear = () => {
    if (tty) out.write(LINE_REDRAW.clear);
  };
  const draw = () => {
    out.write(`${LINE_REDRAW.dim}${SPINNER[frame++ % SPINNER.length]} working…${TERMINAL_STYLE.reset}`);
  };
  return {
    line(text) {
      clear();
      out.write(`${text}\n`);
      if (timer !== undefined) draw();
    },
    working(on) {
      if (!tty) return;
      if (on && timer === undefined) {
        draw();
        timer = setInterval(draw, 100);
      } else if (!on && timer !== undefined) {
        clearInterval(timer);
        timer = undefined;
        clear();
      }
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      clear();
    },
  };
}

function isTty(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

interface FollowFlags {
  json: boolean;
  untilIdle: boolean;
  /** Replay the conversation so far (the default without --until-idle). */
  history: boolean;
  /** With --policy: records answers given elsewhere (the TUI) as they settle. */
  auditor?: SessionAuditor | undefined;
}

async function follow(io: CliIo, session: AgySessionApi, flags: FollowFlags): Promise<number> {
  const tty = isTty(io.stderr);
  const spinner = createSpinner(io.stderr, tty);
  let live = false;
  try {
    for await (const event of session.events({ history: flags.history, signal: io.signal })) {
      if (flags.json) io.stdout.write(`${JSON.stringify(event)}\n`);
      if (live) flags.auditor?.observe(event);
      if (event.type === "history_end") {
        live = true;
        // The conversation has been read: anything after this line is live.
        spinner.line(
          terminalText(
            `agy-bridge watch: following ${session.conversationId} (${session.how}); agy ${session.agyVersion ?? "version unknown"}${session.simulator === true ? " (agy-bridge's simulator)" : ""}; Ctrl-C to stop`,
          ),
        );
        continue;
      }
      if (event.type === "status" && event.reason === "server_gone") {
        spinner.stop();
        io.stderr.write(
          `agy-bridge watch: agy's language server at ${session.url} is gone (it stopped answering; agy has probably exited): start agy and run watch again\n`,
        );
        return 1;
      }
      if (!flags.json) {
        // The session publishes the verdict with the request, so this line precedes the resolution it causes.
        if (event.type === "interaction_requested" && event.policy !== undefined) spinner.line(terminalText(verdictLine(event)));
        const text = withWaitingFor(formatEvent(event, { color: tty }), event);
        if (text !== undefined) spinner.line(text);
        const working = workingAfter(event);
        if (working !== undefined) spinner.working(working);
      }
      // A turn that ended in the replayed history is not the end --until-idle waits for.
      if (flags.untilIdle && live && event.type === "status" && (event.status === "idle" || event.status === "failed")) return 0;
    }
    return 0;
  } finally {
    spinner.stop();
  }
}

/** The `[policy]` line for a request the policy decided: `[policy] approve pwd — rule read-only`. */
function verdictLine(event: Extract<MapperEvent, { type: "interaction_requested" }>): string {
  const request = event.request;
  const what =
    request.kind === "permission" ? request.target : request.kind === "question" ? (request.questions[0]?.question ?? "a question") : request.variant;
  return `[policy] ${event.policy!.decision} ${what} — ${event.policy!.rule === null ? "the default" : `rule ${event.policy!.rule}`}`;
}

/** A `waiting` edge says what for: `  [status] waiting (interaction pending) — for permission`. */
function withWaitingFor(text: string | undefined, event: MapperEvent): string | undefined {
  if (text === undefined || event.type !== "status" || event.waitingFor === undefined) return text;
  return `${text} — for ${event.waitingFor}`;
}

/** After delivery, only a failure is news: the verdict was printed with the request. */
function deliveryFailed(outcome: PolicyOutcome): boolean {
  return outcome.error !== undefined || (outcome.result !== undefined && outcome.result.result !== "delivered");
}

/** Whether the agent is working after `event` (the spinner's state), or undefined when the event does not say. */
function workingAfter(event: MapperEvent): boolean | undefined {
  switch (event.type) {
    case "status":
      return event.status === "running";
    case "interaction_requested":
    case "conversation_rotated":
      return false;
    case "diagnostic":
      // The stream is down: nothing is known to be working.
      return event.code === "connection_lost" ? false : undefined;
    case "usage":
    case "model_changed":
    case "history_end":
    case "agy_version_changed":
      return undefined;
    default:
      return true;
  }
}

export const watchCommand = defineCommand({
  name: "watch",
  summary: "follow a conversation as events (NDJSON with --json)",
  help: HELP,
  options: {
    ...CONNECTION_OPTIONS,
    ...PANE_OPTION,
    json: { type: "boolean" },
    "until-idle": { type: "boolean" },
    "from-start": { type: "boolean" },
    mode: { type: "string" },
    ...POLICY_OPTIONS,
    ...DESKTOP_OPTIONS,
  },
  async run(io, { values }) {
    const target = await resolveConversationTarget(io, sessionTarget("watch", values, io.env));
    const mode = values.mode ?? "stream";
    if (mode !== "stream" && mode !== "poll") {
      io.stderr.write("agy-bridge watch: --mode takes stream or poll; run `agy-bridge watch --help`\n");
      return 2;
    }
    const untilIdle = values["until-idle"] === true;
    if (values.policy === undefined && (values.workspace !== undefined || values["audit-file"] !== undefined)) {
      io.stderr.write("agy-bridge watch: --workspace and --audit-file go with --policy; run `agy-bridge watch --help`\n");
      return 2;
    }
    let session: AgySessionApi | undefined;
    let auditor: SessionAuditor | undefined;
    let desktop: WatchDesktop | undefined;
    try {
      if (values["notify-desktop"] === true) {
        // Checked before attaching: a person who asked for alerts hears at once when there can be none.
        let plan;
        try {
          plan = await prepareDesktop(io, "watch");
        } catch (error) {
          io.stderr.write(`${terminalText(`agy-bridge watch: ${(error as Error).message}`)}\n`);
          return 1;
        }
        if (typeof plan === "string") {
          io.stderr.write(`${terminalText(`agy-bridge watch: ${plan}`)}\n`);
          return 2;
        }
        desktop = await startWatchDesktop(io, plan);
      }
      let policy;
      try {
        policy = await readPolicyOption(values, io.env);
      } catch (error) {
        if (!(error instanceof (await import("../policy/index.js")).PolicyError)) throw error;
        // Refused before anything is attached: the line and column say what to fix.
        io.stderr.write(`${terminalText(`agy-bridge watch: ${error.message}`)}\n`);
        return 1;
      }
      const extra: Partial<AttachOptions> = { mode };
      if (policy !== undefined) {
        auditor = auditorFor(io, auditLogFor(io, values), "watch");
        const json = values.json === true;
        Object.assign(
          extra,
          policyAttachOption(io, policy, values, auditor, (outcome) => {
            if (!json && deliveryFailed(outcome)) io.stderr.write(`${terminalText(decisionLine(outcome))}\n`);
          }),
        );
      }
      session = await attachFromArgs(io, target, extra);
      desktop?.follow(session);
      return await follow(io, session, { json: values.json === true, untilIdle, history: !untilIdle || values["from-start"] === true, auditor });
    } catch (error) {
      if (io.signal.aborted) return 0;
      io.stderr.write(`${failureText("watch", error)}\n`);
      return 1;
    } finally {
      await desktop?.close();
      await session?.close();
      await auditor?.flush().catch(() => undefined);
    }
  },
});
