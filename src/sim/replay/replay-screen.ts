/**
 * The replay's "TUI": draws the recorded screen the replay server says is
 * current, in this terminal, redrawn whenever it changes. It takes no keys
 * but the ones that quit (C-c, C-d, q): a recording cannot be steered. The
 * pane should be at least as large as the one captured, or rows wrap and
 * scroll as they did not on agy.
 *
 * A screen file is `capture-pane` text, which holds no escape sequence; one
 * that does came from somewhere else (someone's hand-made capture) and must
 * not reach the terminal raw — an OSC 52 would write the clipboard. Each row
 * goes through `safeText` (the CLI's `terminalText`), so it is shown, not
 * obeyed; the only sequence written raw is this writer's own clear-screen.
 */
import type { ReplayServer } from "./replay-server.js";

export interface ReplayScreenOptions {
  server: Pick<ReplayServer, "screenAt" | "onScreen">;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** How a row of recorded text is made safe for this terminal: every control character shown, none obeyed. */
  safeText: (row: string) => string;
}

export interface ReplayScreen {
  start(): void;
  stop(): void;
  /** Resolves when a quit key was pressed or input ended. */
  readonly closed: Promise<void>;
}

const CLEAR = "\x1b[2J\x1b[3J\x1b[H";

export function createReplayScreen(options: ReplayScreenOptions): ReplayScreen {
  let unsubscribe: (() => void) | undefined;
  let quit: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    quit = resolve;
  });
  const draw = (text: string | undefined): void => {
    const rows = (text ?? "(this capture has no screens)").replace(/\n+$/, "").split("\n");
    options.output.write(`${CLEAR}${rows.map((row) => options.safeText(row)).join("\r\n")}`);
  };
  const onData = (chunk: Buffer | string): void => {
    const text = typeof chunk === "string" ? chunk : chunk.toString("latin1");
    if (/[\x03\x04q]/.test(text)) quit();
  };
  const input = options.input as NodeJS.ReadableStream & { setRawMode?: (on: boolean) => void; isTTY?: boolean };
  return {
    closed,
    start() {
      if (input.isTTY === true) input.setRawMode?.(true);
      input.on("data", onData);
      input.once("end", quit);
      draw(options.server.screenAt());
      unsubscribe = options.server.onScreen(draw);
    },
    stop() {
      unsubscribe?.();
      input.off("data", onData);
      if (input.isTTY === true) input.setRawMode?.(false);
      options.output.write("\r\n");
    },
  };
}
