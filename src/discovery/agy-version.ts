/**
 * Which agy this is, read from what a running agy already shows — never by
 * starting an agy binary: a started copy may update itself in place
 * (spike-notes §14 #1), so even `agy --version` could change the agy on the
 * machine. Pure: callers read `/proc` and tmux and hand over text.
 *
 * Sources, in the order discovery tries them:
 *   1. `process`: `ANTIGRAVITY_LS_VERSION=cli-<ver>` in the environment agy
 *      gives the processes it spawns (spike-notes §10.3), else a directory
 *      of agy's executable path that is a version (`…/1.2.10/bin/agy`);
 *   2. `screen`: the banner agy draws at launch, `Antigravity CLI <ver>`
 *      (spike-notes §14 #3), the last one in the pane's scrollback;
 *   3. `server`: no RPC of agy's language server is known to carry its
 *      version (§14 #2), so nothing is read from it yet; the name is kept
 *      for when one is found.
 */

/** Where a version came from. */
export type AgyVersionSource = "process" | "screen" | "server";

/** What is known about one agy's version: `agyVersion` null when unknown. */
export interface AgyVersionInfo {
  agyVersion: string | null;
  agyVersionSource: AgyVersionSource | null;
  /** Where exactly, in words (`ANTIGRAVITY_LS_VERSION in the environment of its child pid 12`); never a secret. */
  agyVersionDetail?: string;
}

/** The version is unknown. */
export const UNKNOWN_VERSION: AgyVersionInfo = { agyVersion: null, agyVersionSource: null };

/**
 * The newest agy whose TUI any source of our facts saw (1.2.17, spike-notes
 * §14 #4): past it, agy-bridge says "newer than probed" and a caller that
 * chooses keys by version takes the most conservative row.
 */
export const NEWEST_PROBED_AGY = "1.2.17";

const VERSION = /^(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?(?:[-+][0-9A-Za-z.-]{1,40})?$/;

/** `1.2.10`, `1.2`, `1.3.0-rc1` as given; anything else (`sim`, empty, a path) is not a version. */
export function asAgyVersion(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim().replace(/^v/, "");
  return VERSION.test(trimmed) ? trimmed : undefined;
}

/** `cli-1.2.10` (agy's `ANTIGRAVITY_LS_VERSION`) → `1.2.10`; `cli-sim` and other words → undefined. */
export function versionFromEnvironmentValue(value: string | undefined): string | undefined {
  return asAgyVersion(value?.replace(/^cli-/, ""));
}

/**
 * A version named by agy's executable path: a directory that is exactly a
 * version (`/opt/agy/versions/1.2.10/bin/agy`). Our inference, not a
 * recorded layout (the recorded ones, `/usr/local/bin/agy` and
 * `~/.local/bin/agy`, name none): a path without one gives undefined.
 */
export function versionFromExecutable(path: string): string | undefined {
  const parts = path
    .replace(/ \(deleted\)$/, "")
    .split("/")
    .slice(0, -1);
  for (let i = parts.length - 1; i >= 0; i--) {
    const found = asAgyVersion(parts[i]);
    if (found !== undefined && /^\d/.test(parts[i] ?? "")) return found;
  }
  return undefined;
}

/**
 * The version in the LAST banner on screen: the row `Antigravity CLI 1.2.1`
 * beside agy's logo (tui 1.1.13 – 1.2.9). Only a row that holds nothing
 * else but the logo counts, so a reply quoting the words is not taken.
 */
export function versionFromBanner(screenText: string): string | undefined {
  let found: string | undefined;
  for (const line of screenText.split("\n")) {
    const match = /^[\s▄▀█▐▌▖▗▘▝]*Antigravity CLI (v?\d[0-9A-Za-z.+-]*)\s*$/.exec(line);
    if (match === null) continue;
    const version = asAgyVersion(match[1]);
    if (version !== undefined) found = version;
  }
  return found;
}

/**
 * True when an environment marks agy-bridge's own simulator: the
 * `AGY_BRIDGE_SIMULATOR=1` that `agy-bridge sim --as-agy` sets, or the
 * launcher's own `ANTIGRAVITY_LS_VERSION=cli-sim` (a launcher started
 * without `agy-bridge sim`).
 */
export function isSimulatorEnvironment(env: ReadonlyMap<string, string>): boolean {
  return env.get("AGY_BRIDGE_SIMULATOR") === "1" || env.get("ANTIGRAVITY_LS_VERSION") === "cli-sim";
}

/** Numeric parts of a version (`1.2` is `1.2.0`), or undefined for text that is none. */
function parts(version: string): [number, number, number] | undefined {
  const match = VERSION.exec(version.trim().replace(/^(?:cli-|v)/, ""));
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

/** Negative, 0 or positive as `a` is older than, equal to or newer than `b`; undefined when either is no version. */
export function compareAgyVersions(a: string, b: string): number | undefined {
  const x = parts(a);
  const y = parts(b);
  if (x === undefined || y === undefined) return undefined;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return 0;
}

/** True when `version` is known and newer than {@link NEWEST_PROBED_AGY}. */
export function isNewerThanProbed(version: string | null): boolean {
  if (version === null) return false;
  return (compareAgyVersions(version, NEWEST_PROBED_AGY) ?? 0) > 0;
}

/** What one agy process shows of itself: its own environment, its children's, its executable. */
export interface ProcessEvidence {
  /** agy's own `/proc/<pid>/environ`, when readable. */
  ownEnv?: ReadonlyMap<string, string>;
  /** Its descendants' environments, nearest first. */
  childEnvs: ReadonlyArray<{ pid: number; env: ReadonlyMap<string, string> }>;
  executable: string;
}

/** What a process says about its version (`process` source) and whether it is agy-bridge's simulator. */
export function versionOfProcess(evidence: ProcessEvidence): AgyVersionInfo & { simulator: boolean } {
  const simulator = (evidence.ownEnv !== undefined && isSimulatorEnvironment(evidence.ownEnv)) || evidence.childEnvs.some((c) => isSimulatorEnvironment(c.env));
  for (const child of evidence.childEnvs) {
    const version = versionFromEnvironmentValue(child.env.get("ANTIGRAVITY_LS_VERSION"));
    if (version !== undefined) {
      return {
        agyVersion: version,
        agyVersionSource: "process",
        agyVersionDetail: `ANTIGRAVITY_LS_VERSION in the environment of its child pid ${child.pid}`,
        simulator,
      };
    }
  }
  const fromPath = versionFromExecutable(evidence.executable);
  if (fromPath !== undefined)
    return { agyVersion: fromPath, agyVersionSource: "process", agyVersionDetail: `its executable's directory (${evidence.executable})`, simulator };
  return { ...UNKNOWN_VERSION, simulator };
}
