/**
 * What the demo prints. Human mode: one line per step and per event, the
 * assistant's answer written as its `message_delta` chunks arrive. `--json`:
 * NDJSON of the events as the session emits them plus the demo's own step
 * records, which carry a `demo` field (and no `type`) so a reader of events
 * can tell them apart.
 */
import type { MapperEvent } from "../mapper/index.js";
import { formatEvent } from "./event-text.js";
import { terminalText } from "./terminal-text.js";

/** A demo step record (`--json`): `demo` names the step. */
export type DemoRecord =
  | { demo: "tmux"; socketName: string; socketPath: string; pane: string; panePid: number; command: string }
  | { demo: "discovered"; how: string; url: string; pid?: number; conversationId: string; csrfTokenPresent: boolean }
  | { demo: "turn"; turn: number; text: string; result: string; reason: string }
  | {
      demo: "answer";
      interactionId: string;
      stepIndex: number;
      kind: string;
      call: "approve" | "answer";
      optionIds?: string[];
      result: string;
      deliveredTo?: number;
    }
  | { demo: "prompt_keys"; pane: string; keys: string }
  | { demo: "screen"; pane: string; lines: string[] }
  | { demo: "cleanup"; processesEnded: number; leftover: number[]; socketRemoved: boolean }
  | { demo: "done"; ms: number }
  | { demo: "failed"; message: string };

export interface DemoOutput {
  event(event: MapperEvent): void;
  record(record: DemoRecord): void;
  /** A diagnostic for people (stderr), never part of the output proper. */
  note(line: string): void;
}

export interface DemoOutputOptions {
  json: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** The printer for one demo run. */
export function createDemoOutput(options: DemoOutputOptions): DemoOutput {
  const { stdout, stderr } = options;
  if (options.json) {
    return {
      event: (event) => stdout.write(`${JSON.stringify(event)}\n`),
      record: (record) => stdout.write(`${JSON.stringify(record)}\n`),
      note: (line) => stderr.write(`${terminalText(line)}\n`),
    };
  }
  /** The message whose deltas are being written on the current line. */
  let open: string | undefined;
  /** Messages whose deltas were written (their committed `message` is not repeated). */
  const streamed = new Set<string>();
  let promptsClosed = false;
  const endLine = (): void => {
    if (open !== undefined) stdout.write("\n");
    open = undefined;
  };
  /** One line of ours holding agy's text (a reason, a path, a screen row): shown safe. */
  const line = (text: string): void => {
    endLine();
    stdout.write(`${terminalText(text)}\n`);
  };
  return {
    event(event) {
      if (event.type === "message_delta") {
        if (open !== event.messageId || event.replace) {
          endLine();
          // A message interrupted by another line goes on after "…".
          const prefix = event.replace ? "  assistant (rewritten): " : streamed.has(event.messageId) ? "  … " : "  assistant: ";
          stdout.write(prefix);
          open = event.messageId;
        }
        streamed.add(event.messageId);
        stdout.write(terminalText(event.text, { keepNewlines: true }).replace(/\n/g, "\n    "));
        if (event.final) endLine();
        return;
      }
      // The committed message repeats what its deltas already wrote.
      if (event.type === "message" && streamed.has(event.messageId) && !event.failed) return;
      const text = formatEvent(event);
      if (text !== undefined) {
        // Already safe, and tool output spans lines.
        endLine();
        stdout.write(`${text}\n`);
      }
    },
    record(record) {
      if (record.demo === "prompt_keys") promptsClosed = true;
      for (const text of humanLines(record)) line(text);
      if (record.demo === "screen" && promptsClosed) {
        // What a reader would otherwise take for a failed answer (spike-notes §5.4).
        line(
          "      (agy's TUI labels a prompt answered over RPC as declined or dismissed when keys close it; the RPC answers above are the ones agy acted on)",
        );
      }
    },
    note: (text) => stderr.write(`${terminalText(text)}\n`),
  };
}

function humanLines(record: DemoRecord): string[] {
  switch (record.demo) {
    case "tmux":
      return [`demo: started the simulated agy in a private tmux server (-L ${record.socketName}), pane ${record.pane}: ${record.command}`];
    case "discovered":
      return [
        `demo: discovery found it: ${record.how}`,
        `      ${record.url}, conversation ${record.conversationId}, CSRF token ${record.csrfTokenPresent ? "found (not shown)" : "none"}`,
      ];
    case "turn":
      return [`demo: turn ${record.turn} typed into the pane through tmux: ${record.result} — ${record.reason}`];
    case "answer": {
      const what = record.call === "approve" ? "approve" : `answer option ${(record.optionIds ?? []).join("+")}`;
      const where = record.deliveredTo === undefined ? "" : ` to step ${record.deliveredTo}`;
      return [`demo: ${what} over RPC for step ${record.stepIndex}: ${record.result}${where}`];
    }
    case "prompt_keys":
      return [`demo: closed the TUI's own prompt in pane ${record.pane} with keys (${record.keys})`];
    case "screen":
      // Made safe before framing, so the frame's width counts what is shown.
      return ["demo: the TUI as the person sees it now:", ...frame(record.lines.map((l) => terminalText(l)))];
    case "cleanup":
      return [
        `demo: cleaned up: tmux server killed, ${record.processesEnded} ${record.processesEnded === 1 ? "process" : "processes"} ended, socket ${record.socketRemoved ? "removed" : "NOT removed"}` +
          (record.leftover.length > 0 ? `, still running: ${record.leftover.join(", ")}` : ""),
      ];
    case "done":
      return [`demo: done in ${(record.ms / 1000).toFixed(1)} s`];
    case "failed":
      return [];
  }
}

/** The screen in a box, trailing blank lines dropped. */
export function frame(lines: readonly string[]): string[] {
  const kept = lines.map((l) => l.trimEnd());
  while (kept.length > 0 && (kept.at(-1) ?? "").trim() === "") kept.pop();
  const width = Math.max(0, ...kept.map((l) => [...l].length));
  const bar = "─".repeat(width + 2);
  return [`┌${bar}┐`, ...kept.map((l) => `│ ${l}${" ".repeat(width - [...l].length)} │`), `└${bar}┘`];
}
