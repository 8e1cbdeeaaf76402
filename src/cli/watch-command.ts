/**
 * `agy-bridge watch`: follow a conversation as events.
 */
import { CONNECTION_HELP, CONNECTION_OPTIONS } from "./args.js";
import { defineCommand, type CliIo } from "./command.js";
import type { MapperEvent } from "../mapper/index.js";
import type { AgySessionApi } from "../session/index.js";
import { formatEvent } from "./event-text.js";
import { attachFromArgs, failureText, PANE_HELP, PANE_OPTION, sessionTarget } from "./session-connect.js";

const HELP = `Usage: agy-bridge watch [--conversation ID | --pane TARGET [-L NAME | -S PATH]] [--url URL] [--csrf-token T] [--json] [--until-idle] [--mode stream|poll]

Follows an agy conversation and prints what happens: turns, the assistant's
answers, tool calls and their output, approvals and questions waiting on you
(with the interaction id to pass to approve / deny / answer), status changes.
Each transition is printed once, across stream reconnects and fallbacks.

Options:
  --json              NDJSON on stdout, one event per line (docs/events.md)
  --until-idle        exit 0 when the turn in progress, or the next one, ends
                      (prints only what happens from now on)
  --mode MODE         stream (default: the stream, with snapshots and probes) or poll
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Human output goes to stderr, coloured with a spinner while the agent works
when stderr is a terminal. Exit 0 on --until-idle's end or on SIGINT; 1 with
one sentence when the conversation cannot be followed; 2 on a usage error.
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
    if (tty) out.write("\r\x1b[K");
  };
  const draw = () => {
    out.write(`\r\x1b[2m${SPINNER[frame++ % SPINNER.length]} working…\x1b[0m`);
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

async function follow(io: CliIo, session: AgySessionApi, json: boolean, untilIdle: boolean): Promise<number> {
  const tty = isTty(io.stderr);
  const spinner = createSpinner(io.stderr, tty);
  // Printed once the conversation has been read: anything after this line is live.
  spinner.line(`agy-bridge watch: following ${session.conversationId} (${session.how}); Ctrl-C to stop`);
  try {
    for await (const event of session.events({ history: !untilIdle, signal: io.signal })) {
      if (json) io.stdout.write(`${JSON.stringify(event)}\n`);
      else {
        const text = formatEvent(event, { color: tty });
        if (text !== undefined) spinner.line(text);
        spinner.working(workingAfter(event));
      }
      if (untilIdle && event.type === "status" && (event.status === "idle" || event.status === "failed")) return 0;
    }
    return 0;
  } finally {
    spinner.stop();
  }
}

/** Whether the agent is working after `event` (the spinner's state); deltas mean it is. */
function workingAfter(event: MapperEvent): boolean {
  if (event.type === "status") return event.status === "running";
  return event.type !== "interaction_requested" && event.type !== "conversation_rotated";
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
    mode: { type: "string" },
  },
  async run(io, { values }) {
    const target = sessionTarget("watch", values, io.env);
    const mode = values.mode ?? "stream";
    if (mode !== "stream" && mode !== "poll") {
      io.stderr.write("agy-bridge watch: --mode takes stream or poll; run `agy-bridge watch --help`\n");
      return 2;
    }
    let session: AgySessionApi | undefined;
    try {
      session = await attachFromArgs(io, target, { mode });
      return await follow(io, session, values.json === true, values["until-idle"] === true);
    } catch (error) {
      if (io.signal.aborted) return 0;
      io.stderr.write(`${failureText("watch", error)}\n`);
      return 1;
    } finally {
      await session?.close();
    }
  },
});
