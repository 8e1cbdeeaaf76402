/**
 * The compatibility report of `agy-bridge doctor --report`: which facts of
 * docs/spike-notes.md hold on this agy. The JSON shape is a contract:
 * `{agyVersion, generatedAt, facts:[{id, statement, status, seen}]}`. Nothing
 * secret goes in: no token, no conversation text or id, only shapes,
 * statuses, counts, ports and agy's own error messages.
 */
import { checkFacts, type FactResult } from "./compat-facts.js";
import type { Observations } from "./compat-probes.js";

export interface CompatReport {
  agyVersion: string | null;
  generatedAt: string;
  facts: FactResult[];
}

export function buildReport(obs: Observations, generatedAt: Date): CompatReport {
  return { agyVersion: obs.agyVersion, generatedAt: generatedAt.toISOString(), facts: checkFacts(obs) };
}

const MARK: Record<FactResult["status"], string> = { confirmed: "confirmed", contradicted: "**contradicted**", not_checked: "not checked" };

/** The report as Markdown, ready to paste into a bug report. */
export function reportMarkdown(report: CompatReport): string {
  const count = (status: FactResult["status"]) => report.facts.filter((f) => f.status === status).length;
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s+/g, " ");
  const lines = [
    "# agy-bridge compatibility report",
    "",
    `- agy version: ${report.agyVersion ?? "unknown"}`,
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
