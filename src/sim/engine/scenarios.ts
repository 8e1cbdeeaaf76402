/**
 * Loading and matching simulator scenarios (`fixtures/scenarios/*.json`).
 */
import { readdir, readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AgyBridgeError } from "../../errors.js";
import { ScenarioSchema, type Scenario } from "./scenario-schema.js";

/**
 * The scenarios shipped with the package: `fixtures/scenarios/` in the
 * nearest directory above this module that has one (src/sim/engine/ and
 * dist/sim/engine/ are three levels down, the bundled CLI in dist/bin/ two).
 */
export const DEFAULT_SCENARIO_DIR = shippedScenarioDir();

function shippedScenarioDir(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, "fixtures", "scenarios");
    if (existsSync(candidate)) return `${candidate}/`;
    if (dirname(dir) === dir) return fileURLToPath(new URL("../../../fixtures/scenarios/", import.meta.url));
  }
}

/**
 * Validates one scenario document. Throws an `invalid_argument` error that
 * names the file and the JSON path of the first problems.
 */
export function parseScenario(value: unknown, fileName: string): Scenario {
  const parsed = ScenarioSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
      .join("; ");
    throw new AgyBridgeError("invalid_argument", `scenario ${fileName} is invalid: ${problems}`);
  }
  if ("regex" in parsed.data.match) {
    try {
      new RegExp(parsed.data.match.regex);
    } catch (error) {
      throw new AgyBridgeError("invalid_argument", `scenario ${fileName} is invalid: match.regex: ${String(error)}`);
    }
  }
  return { name: basename(fileName).replace(/\.json$/, ""), ...parsed.data };
}

/**
 * Reads every `*.json` scenario in `dir` (default: the shipped
 * `fixtures/scenarios/`), sorted by file name.
 */
export async function loadScenarios(dir: string = DEFAULT_SCENARIO_DIR): Promise<Scenario[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith(".json")).sort();
  } catch (error) {
    throw new AgyBridgeError("invalid_argument", `cannot read scenario directory ${dir}`, { cause: error });
  }
  const scenarios: Scenario[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const text = await readFile(path, "utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new AgyBridgeError("invalid_argument", `scenario ${path} is not JSON: ${String(error)}`, { cause: error });
    }
    scenarios.push(parseScenario(json, path));
  }
  return scenarios;
}

/**
 * The scenario for a turn: an exact `text` match first, then the first
 * matching `regex`, then the first `default` scenario.
 */
export function matchScenario(scenarios: readonly Scenario[], text: string): Scenario | undefined {
  const trimmed = text.trim();
  return (
    scenarios.find((s) => "text" in s.match && s.match.text === trimmed) ??
    scenarios.find((s) => "regex" in s.match && new RegExp(s.match.regex).test(trimmed)) ??
    scenarios.find((s) => "default" in s.match)
  );
}
