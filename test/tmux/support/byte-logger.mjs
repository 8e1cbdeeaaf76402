// A raw-mode terminal program for tmux tests: turns bracketed paste on, then
// appends every byte it receives to the file named by argv[2], unchanged.
// It draws a minimal agy-like screen — a composer between two full-width
// rules echoing what was typed, and a status row with `? for shortcuts` —
// so a driver that types only into a ready, empty composer types into it,
// and sees its paste arrive and leave on Enter (CR). Ctrl-A/Ctrl-K clear the
// echo, Backspace removes a character; the log keeps every byte regardless.
// With --keep-on-enter, Enter leaves the echo: a turn that never starts.
import { appendFileSync, writeFileSync } from "node:fs";

const log = process.argv[2];
if (log === undefined) throw new Error("usage: byte-logger.mjs <log-file> [--keep-on-enter]");
const keepOnEnter = process.argv.includes("--keep-on-enter");
writeFileSync(log, "");
let draft = "";
let drawing = false;

function rows() {
  const cols = process.stdout.columns || 100;
  const height = process.stdout.rows || 30;
  const rule = "─".repeat(cols);
  const body = [];
  draft.split("\n").forEach((line, i) => {
    const width = cols - 2;
    const chunks = line === "" ? [""] : Array.from({ length: Math.ceil(line.length / width) }, (_, k) => line.slice(k * width, (k + 1) * width));
    chunks.forEach((chunk, k) => body.push(`${i === 0 && k === 0 ? ">" : " "} ${chunk}`.trimEnd()));
  });
  const status = `? for shortcuts${" ".repeat(Math.max(1, cols - 1 - 15 - 17))}Byte Logger · hig`;
  // Taller than the pane: the top rule scrolls off and only the draft's last rows show, as in agy.
  if (body.length > height - 3) return [...body.slice(-(height - 2)), rule, status];
  return ["byte logger", rule, ...body, rule, status];
}

function draw() {
  if (drawing) return;
  drawing = true;
  setImmediate(() => {
    drawing = false;
    process.stdout.write(`\x1b[H\x1b[2J${rows().join("\r\n")}`);
  });
}

process.stdin.setRawMode(true);
process.stdin.on("data", (chunk) => {
  appendFileSync(log, chunk);
  const text = chunk.toString("utf8").replace(/\x1b\[20[01]~/g, "");
  for (const ch of text.replace(/\x1b\[[0-9;]*[A-Za-z~]/g, "")) {
    if (ch === "\r") draft = keepOnEnter ? draft : "";
    else if (ch === "\x01" || ch === "\x0b") draft = "";
    else if (ch === "\x7f") draft = draft.slice(0, -1);
    else if (ch === "\n" || ch === "\t" || ch >= " ") draft += ch;
  }
  draw();
});
process.stdin.resume();
process.stdout.write("\x1b[?2004h");
draw();
