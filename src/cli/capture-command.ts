/**
 * `agy-bridge capture`: records a live agy conversation as a redacted fixture
 * directory (docs/capture.md) that `agy-bridge map DIR` and
 * `agy-bridge sim --replay DIR` take as it is. Reads only: it sends agy no
 * turn and no answer. The CSRF token is never printed or written.
 */
import { hostname, userInfo } from "node:os";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createCaptureSink, createRedactor, recordCapture, resolveCaptureTarget, type CaptureTarget } from "../capture/index.js";
import { createAgyRpcClient } from "../rpc/client.js";
import { createTmuxDriver } from "../tmux/tmux-driver.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, UsageError } from "./args.js";
import { defineCommand, type CliIo } from "./command.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { failureText, PANE_HELP, PANE_OPTION, sessionTarget } from "./session-connect.js";
import { terminalText } from "./terminal-text.js";
import { sleep } from "../util/sleep.js";

const HELP = `Usage: agy-bridge capture --conversation ID [--pane TARGET [-L NAME | -S PATH]] [--out DIR] [--duration 60s | --until-idle] [--keep-text] [--keep-commands] [--json]

Records a live agy conversation as a fixture directory: stream frames with
their timing, GetCascadeTrajectorySteps snapshots, GetAllCascadeTrajectories
summaries, the TUI's screen at every state change (when the pane is known),
every interaction resolved meanwhile, and meta.json (agy's version, platform,
listeners). Nothing is sent to agy. Redaction is on: tokens, signatures,
prompts and model output, command lines and outputs, home paths, user, host
and e-mail names are replaced by same-length placeholders, ids consistently.
Replay it with \`agy-bridge sim --replay DIR\`, map it with \`agy-bridge map DIR\`.

Options:
  --out DIR           where to write (a new or empty directory; default
                      ./agy-capture-<time>)
  --duration D        stop after D (90s, 5m; default 60s unless --until-idle)
  --until-idle        stop when a turn that ran during the capture has ended
                      and agy's run status says IDLE with nothing waiting
                      (bounded by --duration when both are given)
  --keep-text         keep prompts and model output (secrets still scrubbed)
  --keep-commands     keep command lines and outputs (secrets still scrubbed)
  --json              print one JSON line when done: {dir, snapshots, frames,
                      summaries, screens, answers, ended}
${CONNECTION_HELP}
${PANE_HELP}
  -h, --help          show this help

Progress goes to stderr. Ctrl-C ends the capture early and keeps what was
recorded. Exit 0 when the capture was written; 1 with one sentence when it
could not be (no agy, no conversation, the directory is not empty); 2 on a
usage error.
`;

export interface CaptureCommandDeps {
  /** Resolves the agy to record; default discovery (`resolveCaptureTarget`). */
  resolve?: typeof resolveCaptureTarget;
}

export function createCaptureCommand(deps: CaptureCommandDeps = {}) {
  return defineCommand({
    name: "capture",
    summary: "record a live agy conversation as a redacted fixture directory",
    help: HELP,
    options: {
      ...CONNECTION_OPTIONS,
      ...PANE_OPTION,
      out: { type: "string" },
      duration: { type: "string" },
      "until-idle": { type: "boolean" },
      "keep-text": { type: "boolean" },
      "keep-commands": { type: "boolean" },
      json: { type: "boolean" },
    },
    async run(io, { values }) {
      const where = await resolveConversationTarget(io, sessionTarget("capture", values, io.env));
      if (values.out === "") throw new UsageError("--out needs a non-empty value; run `agy-bridge capture --help`");
      const durationMs = values.duration === undefined ? (values["until-idle"] === true ? undefined : 60_000) : parseDuration(values.duration);
      const out = values.out ?? `agy-capture-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      let target: CaptureTarget;
      try {
        target = await (deps.resolve ?? resolveCaptureTarget)({
          ...where.connection,
          ...(where.pane === undefined ? {} : { pane: where.pane }),
          signal: io.signal,
        });
      } catch (error) {
        io.stderr.write(`${failureText("capture", error)}\n`);
        return 1;
      }
      const conversationId = target.conversationId;
      if (conversationId === undefined) {
        io.stderr.write("agy-bridge capture: this agy has no conversation to record yet; type a first turn in agy, or pass --conversation ID\n");
        return 1;
      }
      const client = createAgyRpcClient({ baseUrl: target.url, ...(target.csrfToken === undefined ? {} : { csrfToken: target.csrfToken }) });
      const pane = target.pane;
      const tmux =
        pane === undefined
          ? undefined
          : createTmuxDriver({
              socket: pane.socketPath !== undefined ? { path: pane.socketPath } : pane.socketName !== undefined ? { name: pane.socketName } : undefined,
            });
      try {
        const sink = createCaptureSink(out);
        const redactor = createRedactor({
          keepText: values["keep-text"] === true,
          keepCommands: values["keep-commands"] === true,
          secrets: target.csrfToken === undefined ? [] : [target.csrfToken],
          ...homeAndUser(io),
          hosts: [hostname(), hostname().split(".")[0] ?? ""].filter((h) => h !== ""),
        });
        io.stderr.write(
          `${terminalText(`agy-bridge capture: recording ${conversationId} at ${target.url}${pane === undefined ? " (no pane: no screens)" : ` and pane ${pane.target}`} into ${out}`)}\n`,
        );
        const result = await recordCapture({
          client,
          conversationId,
          capturePane: tmux === undefined || pane === undefined ? undefined : () => tmux.capturePane(pane.target),
          sink,
          redactor,
          clock: { now: () => Date.now(), sleep },
          durationMs,
          untilIdle: values["until-idle"] === true,
          signal: io.signal,
          meta: {
            agyVersion: target.agyVersion === null ? null : redactor.text(target.agyVersion),
            platform: `${process.platform}-${process.arch}`,
            agyBridgeVersion: ownVersion(),
            listeners: target.listeners,
          },
          onProgress: (line) => io.stderr.write(`${terminalText(`  ${line}`)}\n`),
        });
        const summary = { dir: out, ...result };
        if (values.json === true) io.stdout.write(`${JSON.stringify(summary)}\n`);
        io.stderr.write(
          `${terminalText(`agy-bridge capture: ${result.snapshots} snapshots, ${result.frames} frames, ${result.summaries} summaries, ${result.screens} screens, ${result.answers} answers in ${out} (ended: ${result.ended})`)}\n`,
        );
        return 0;
      } catch (error) {
        io.stderr.write(`${failureText("capture", error)}\n`);
        return 1;
      } finally {
        await client.close();
      }
    },
  });
}

export const captureCommand = createCaptureCommand();

function homeAndUser(io: CliIo): { home?: string; users: string[] } {
  const users = new Set<string>();
  if (io.env.USER !== undefined && io.env.USER !== "") users.add(io.env.USER);
  try {
    users.add(userInfo().username);
  } catch {
    // No passwd entry (a container's uid): the environment's name is all there is.
  }
  const home = io.env.HOME;
  return { ...(home === undefined || home === "" || home === "/" ? {} : { home }), users: [...users] };
}

function parseDuration(text: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?$/.exec(text.trim());
  const n = match === null ? Number.NaN : Number(match[1]);
  if (match === null || !(n > 0)) throw new UsageError("--duration wants a duration such as 90s, 5m or 1h");
  const unit = match[2] ?? "s";
  return Math.round(n * (unit === "ms" ? 1 : unit === "s" ? 1_000 : unit === "m" ? 60_000 : 3_600_000));
}

function ownVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(new URL("../..", import.meta.url).pathname, "package.json"), "utf8")) as { version?: string };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}
