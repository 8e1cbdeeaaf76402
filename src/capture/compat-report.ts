/**
 * The compatibility report of `agy-bridge doctor --report`: which facts of
 * docs/spike-notes.md hold on this agy. The JSON shape is a contract:
 * `{agyVersion, agyVersionSource, newerThanProbed, simulator, generatedAt,
 * facts:[{id, statement, status, seen}]}` (fields are added, never renamed). Nothing
 * secret goes in: no token, no conversation text or id, only shapes,
 * statuses, counts, ports and agy's own error messages.
 */
import { checkFacts, type FactResult } from "./compat-facts.js";
import type { Observations } from "./compat-probes.js";
import { isNewerThanProbed, NEWEST_PROBED_AGY } from "../discovery/agy-version.js";

export interface CompatReport {
  agyVersion: string | null;
  /** Where the version came from (`process`, `screen`), null when unknown. */
  agyVersionSource: "process" | "server" | "screen" | null;
  /** agy is newer than the newest version agy-bridge's facts describe (spike-notes §14 #4). */
  newerThanProbed: boolean;
  /** The agy is agy-bridge's simulator, not a real agy. */
  simulator: boolean;
  generatedAt: string;
  facts: FactResult[];
}

export function buildReport(obs: Observations, generatedAt: Date): CompatReport {
  return {
    agyVersion: obs.agyVersion,
    agyVersionSource: obs.agyVersion === null ? null : (obs.agyVersionSource ?? null),
    newerThanProbed: isNewerThanProbed(obs.agyVersion),
    simulator: obs.simulator === true,
    generatedAt: generatedAt.toISOString(),
    facts: checkFacts(obs),
  };
}

const MARK: Record<FactResult["status"], string> = { confirmed: "confirmed", contradicted: "**contradicted**", not_checked: "not checked" };

/** The report as Markdown, ready to paste into a bug report. */
export function reportMarkdown(report: CompatReport): string {
  const count = (status: FactResult["status"]) => report.facts.filter((f) => f.status === status).length;
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s+/g, " ");
  const lines = [
    "# agy-bridge compatibility report",
    "",
    `- agy version: ${report.agyVersion ?? "unknown"}${report.agyVersionSource === null ? "" : ` (from its ${report.agyVersionSource === "screen" ? "banner on screen" : report.agyVersionSource})`}${report.newerThanProbed ? `, newer than probed (agy-bridge's facts describe agy up to ${NEWEST_PROBED_AGY})` : ""}${report.simulator ? "; agy-bridge's simulator, not a real agy" : ""}`,
    `- generated: ${report.generatedAt}`,
    `- facts: ${count("confirmed")} confirmed, ${count("contradicted")} contradicted, ${count("not_checked")} not checked (ids are sections of agy-bridge's docs/spike-notes.md)`,
    "",
    "| fact | status | statement | seen |",
    "|---|---|---|---|",
    ...report.facts.map((f) => `| ${f.id} | ${MARK[f.status]} | ${cell(f.statement)} | ${f.seen === null ? "" : cell(f.seen)} |`),
    "",
    "Nothing secret is in this report: no CSRF token, no prompt, reply, command",
    "or conversation id — only shapes, statuses, counts, ports and agy's own",
    "error messages. To attach it to a bug report, save it and attach the file:",
    "",
    "    agy-bridge doctor --report > agy-report.md",
    "",
    "(`--json` prints the same as one JSON object.)",
    "",
  ];
  return lines.join("\n");
}
