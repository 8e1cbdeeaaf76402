/**
 * `agy-bridge screen`: reads agy's screen — a tmux pane now, or a saved
 * capture from a file or stdin — and prints the screen model
 * (`readScreen`, spike-notes §13). `--json` prints exactly one object of
 * the contract; other programs are written against it.
 */
import { readFile } from "node:fs/promises";
import { AgyBridgeError } from "../errors.js";
import type { ScreenModel, ScreenPrompt } from "../tmux/index.js";
import { readScreen } from "../tmux/screen-model.js";
import { isPaneTarget } from "../tmux/target.js";
import { UsageError } from "./args.js";
import { defineCommand } from "./command.js";
import { terminalText } from "./terminal-text.js";
import { TMUX_SERVER_OPTIONS, tmuxServerHelp, tmuxServerOf } from "./tmux-server-option.js";

const HELP = `Usage: agy-bridge screen --pane TARGET [-L NAME | -S PATH] [--json]
       agy-bridge screen --file PATH [--json]
       agy-bridge screen - [--json]              # a capture on stdin

Reads agy's TUI — the pane now, or a saved \`tmux capture-pane -p\` text —
and says what is on it: ready (a composer waits for a turn), busy (agy is
generating), prompt (a dialog, picker, menu, survey, the slash popup, a
slider, an overlay, the artifact review panel, or a first-run setup screen
holds the keyboard) or unknown (nothing it recognises; never a guess).

Options:
  --pane TARGET       the pane: a pane id like %3, or an exact session =main
${tmuxServerHelp("the tmux server of --pane")}
  --file PATH         read a saved capture instead
  --json              print the screen model as one JSON object
  -h, --help          show this help

Exit 0 when the screen was read (also when it is unknown), 1 when the pane
or file cannot be read, 2 on a usage error.`;

/** A saved capture is a few hundred KB at most; beyond this it is not a screen. */
const INPUT_LIMIT_BYTES = 16 * 1024 * 1024;

export const screenCommand = defineCommand({
  name: "screen",
  summary: "read agy's screen in a tmux pane (or a saved capture) and say what is on it",
  help: HELP,
  options: { pane: { type: "string" }, ...TMUX_SERVER_OPTIONS, file: { type: "string" }, json: { type: "boolean" } },
  positionals: { max: 1, name: "argument" },
  async run(io, { values, positionals }) {
    const hint = "run `agy-bridge screen --help`";
    const stdin = positionals[0] === "-";
    if (positionals.length > 0 && !stdin) throw new UsageError(`the only argument is - (read a capture from stdin); ${hint}`);
    const server = tmuxServerOf("screen", values);
    const sources = [values.pane !== undefined, values.file !== undefined, stdin].filter(Boolean).length;
    if (sources !== 1) throw new UsageError(`give exactly one of --pane TARGET, --file PATH or -; ${hint}`);
    if (server !== undefined && values.pane === undefined) throw new UsageError(`-L and -S choose the tmux server of --pane; give --pane too; ${hint}`);
    if (values.file === "") throw new UsageError(`--file needs a non-empty value; ${hint}`);
    if (values.pane !== undefined && !isPaneTarget(values.pane)) {
      throw new UsageError(`--pane must be a pane id like %3 or an exact session name like =main; ${hint}`);
    }

    let model: ScreenModel;
    try {
      if (values.pane !== undefined) {
        const name = values["socket-name"];
        const path = values["socket-path"];
        const socket = name !== undefined ? { name } : path !== undefined ? { path } : undefined;
        model = await (await import("../tmux/tmux-driver.js")).createTmuxDriver({ socket }).readPane(values.pane, { signal: io.signal });
      } else {
        model = readScreen(values.file !== undefined ? await readCapture(values.file) : await readStdin(io.stdin));
      }
    } catch (error) {
      io.stderr.write(`agy-bridge screen: ${AgyBridgeError.from(error).message}\n`);
      return 1;
    }
    io.stdout.write(values.json === true ? `${JSON.stringify(model)}\n` : summary(model));
    return 0;
  },
});

async function readCapture(path: string): Promise<string> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "it does not exist" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (code ?? "read failed");
    throw new AgyBridgeError(
      "invalid_argument",
      `The capture file ${terminalText(path)} cannot be read (${why}); save one with \`tmux capture-pane -p -t PANE > FILE\`.`,
      { cause: error },
    );
  }
  if (data.length > INPUT_LIMIT_BYTES) throw tooBig(`The capture file ${terminalText(path)}`);
  return data.toString("utf8");
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : (chunk as Buffer);
    size += buffer.length;
    if (size > INPUT_LIMIT_BYTES) throw tooBig("stdin");
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function tooBig(what: string): AgyBridgeError {
  return new AgyBridgeError("invalid_argument", `${what} holds more than 16 MiB, which is no screen capture; give the output of \`tmux capture-pane -p\`.`);
}

/** A few lines for a person: state, composer, mode and model, and the prompt with its pointer. */
function summary(model: ScreenModel): string {
  const lines = [`state: ${model.state}`];
  const composer = model.composer === "draft" ? `draft: ${JSON.stringify(model.draft ?? "")}` : model.composer;
  lines.push(`composer: ${composer}`);
  lines.push(`mode: ${model.mode ?? "unknown"}   model: ${model.model ?? "unknown"}`);
  if (model.backgroundTasks !== undefined) lines.push(`background tasks: ${model.backgroundTasks} (not busy)`);
  if (model.statusLine === "custom") lines.push("status line: a user-defined one, not agy's (its words are not read)");
  const prompt = model.prompt;
  if (prompt !== null) {
    lines.push(`prompt: ${promptKind(prompt)}, keys ${prompt.keys}${prompt.question === null ? "" : ` — ${prompt.question}`}`);
    const warning = HANDS_OFF[prompt.kind];
    if (warning !== undefined) lines.push(warning);
    prompt.options.forEach((option, i) => {
      const mark = prompt.pointer === i + 1 ? ">" : " ";
      lines.push(`  ${mark} ${option.number === null ? "" : `${option.number}. `}${option.label}`);
    });
  }
  return `${lines.map((line) => terminalText(line)).join("\n")}\n`;
}

/** `file (edit)`, `question 2/3, ← Back`, `setup (sign_in)`: the kind with its detail. */
function promptKind(prompt: ScreenPrompt): string {
  if (prompt.fileAction !== undefined) return `${prompt.kind} (${prompt.fileAction})`;
  if (prompt.setup !== undefined) return `${prompt.kind} (${prompt.setup})`;
  if (prompt.form !== undefined) return `${prompt.kind} ${prompt.form.index}/${prompt.form.total}${prompt.form.back ? ", ← Back" : ""}`;
  return prompt.kind;
}

const HANDS_OFF: Partial<Record<ScreenPrompt["kind"], string>> = {
  setup: "setup required: finish agy's first-run screen in the pane yourself; no key should be sent to it",
  amend: "a person is typing into the amend field; no key should be sent to it",
};
