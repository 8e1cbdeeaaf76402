/**
 * `agy-bridge doctor --report`: probes the agy the session commands would
 * choose, with calls that change nothing, and prints which facts of
 * docs/spike-notes.md hold on it (Markdown, or the JSON report with --json).
 * Exit 0 when a report was produced, contradictions included; 1 when no agy
 * was found. The CSRF token is used, never printed.
 */
import { probeAgy } from "../capture/compat-probes.js";
import { buildReport, reportMarkdown } from "../capture/compat-report.js";
import { resolveCaptureTarget, type CaptureTarget } from "../capture/capture-target.js";
import { createAgyRpcClient } from "../rpc/client.js";
import { createTmuxDriver } from "../tmux/tmux-driver.js";
import { paneTarget } from "../tmux/target.js";
import { paneBannerVersion } from "../discovery/version-lookup.js";
import { paneText } from "./sessions-command.js";
import type { CliIo } from "./command.js";
import { failureText, sessionTarget, type SessionValues } from "./session-connect.js";

export interface DoctorReportDeps {
  resolve?: typeof resolveCaptureTarget;
  now?: () => Date;
}

export async function runDoctorReport(io: CliIo, values: SessionValues & { json?: boolean | undefined }, deps: DoctorReportDeps = {}): Promise<number> {
  const where = sessionTarget("doctor", values, io.env);
  let target: CaptureTarget;
  try {
    target = await (deps.resolve ?? resolveCaptureTarget)({
      ...where.connection,
      ...(where.pane === undefined ? {} : { pane: where.pane }),
      signal: io.signal,
    });
  } catch (error) {
    io.stderr.write(`${failureText("doctor", error)}\n`);
    return 1;
  }
  const client = createAgyRpcClient({ baseUrl: target.url, ...(target.csrfToken === undefined ? {} : { csrfToken: target.csrfToken }) });
  const bare = target.csrfToken === undefined ? undefined : createAgyRpcClient({ baseUrl: target.url });
  const pane = target.pane;
  const tmux =
    pane === undefined
      ? undefined
      : createTmuxDriver({
          socket: pane.socketPath !== undefined ? { path: pane.socketPath } : pane.socketName !== undefined ? { name: pane.socketName } : undefined,
        });
  try {
    // Not named by the process: the last banner in the pane may say (a read of the scrollback, no key).
    let agyVersion = target.agyVersion;
    let agyVersionSource = target.agyVersion === null ? null : (target.agyVersionSource ?? "process");
    if (agyVersion === null && pane !== undefined) {
      const banner = await paneBannerVersion(pane, { signal: io.signal });
      if (banner !== undefined) [agyVersion, agyVersionSource] = [banner, "screen"];
    }
    const obs = await probeAgy({
      client,
      clientWithoutToken: bare,
      url: target.url,
      agyVersion,
      agyVersionSource,
      simulator: target.simulator === true,
      paneLabel: pane === undefined ? undefined : paneText(pane.target, pane),
      listeners: target.listeners,
      conversationId: target.conversationId,
      readScreen: tmux === undefined || pane === undefined ? undefined : () => tmux.readPane(pane.target),
      readPaneCommand:
        tmux === undefined || pane === undefined
          ? undefined
          : () => tmux.run(["display-message", "-p", "-t", paneTarget(pane.target), "#{pane_current_command}"]),
    });
    if (!obs.heartbeat.ok && obs.heartbeat.status === undefined) {
      io.stderr.write(`agy-bridge doctor: no agy answers at ${target.url} (${obs.heartbeat.message}); run \`agy-bridge doctor\` to see what discovery finds\n`);
      return 1;
    }
    const report = buildReport(obs, (deps.now ?? (() => new Date()))());
    io.stdout.write(values.json === true ? `${JSON.stringify(report)}\n` : reportMarkdown(report));
    const contradicted = report.facts.filter((f) => f.status === "contradicted").map((f) => f.id);
    io.stderr.write(
      `agy-bridge doctor: ${report.facts.length} facts checked against agy ${report.agyVersion ?? "(version unknown)"}${contradicted.length === 0 ? ", none contradicted" : `; contradicted: ${contradicted.join(", ")}`}\n`,
    );
    return 0;
  } finally {
    await Promise.all([client.close(), bare?.close()]);
  }
}
