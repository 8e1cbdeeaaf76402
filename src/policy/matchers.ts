/**
 * The two pattern languages of a policy: command patterns (`*` any run of
 * characters, spaces included, `?` one character, nothing else special) and
 * picomatch globs for paths, with `{workspace}` and `{home}` standing for
 * those directories.
 */
import picomatch from "picomatch";

const compiledCommands = new Map<string, RegExp>();

/** Whether `pattern` matches the whole of `text`. */
export function commandPatternMatches(pattern: string, text: string): boolean {
  let regex = compiledCommands.get(pattern);
  if (regex === undefined) {
    let source = "";
    for (const ch of pattern) {
      if (ch === "*") source += "[\\s\\S]*";
      else if (ch === "?") source += "[\\s\\S]";
      else source += ch.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
    }
    regex = new RegExp(`^${source}$`, "u");
    compiledCommands.set(pattern, regex);
  }
  return regex.test(text);
}

export interface PathPlaces {
  workspace?: string | undefined;
  home?: string | undefined;
}

/**
 * Whether `glob` matches the absolute `path`. A glob naming a place the
 * context lacks (`{workspace}` with no workspace known) matches nothing.
 */
export function pathGlobMatches(glob: string, path: string, places: PathPlaces): boolean {
  let expanded = glob;
  for (const [name, value] of [
    ["workspace", places.workspace],
    ["home", places.home],
  ] as const) {
    if (!expanded.includes(`{${name}}`)) continue;
    if (value === undefined) return false;
    expanded = expanded.split(`{${name}}`).join(escapeGlob(trimSlash(value)));
  }
  return picomatch(expanded, { dot: true })(path);
}

function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]{}()!+@]/g, "\\$&");
}

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, "") : path;
}

/**
 * A request's path as an absolute, normalised POSIX path: `file://` URIs
 * decoded, relative paths resolved against the workspace (or `/`).
 */
export function absolutePath(path: string, workspace: string | undefined): string {
  return normalisePath(writtenPath(path, workspace));
}

/**
 * A request's path as written, made absolute but not normalised: `file://`
 * URIs decoded, relative paths joined to the workspace (or `/`). `.` and
 * `..` are kept, for a resolver that walks symlinks before it applies `..`.
 */
export function writtenPath(path: string, workspace: string | undefined): string {
  let raw = path;
  if (raw.startsWith("file://")) {
    try {
      raw = decodeURIComponent(new URL(raw).pathname);
    } catch {
      raw = raw.slice("file://".length);
    }
  }
  if (!raw.startsWith("/")) raw = `${workspace ?? ""}/${raw}`;
  return raw;
}

/** `.`, `..` and repeated slashes removed, lexically (no symlink is looked at). */
export function normalisePath(raw: string): string {
  const out: string[] = [];
  for (const part of raw.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

/** Whether `minute` (since midnight) falls in `HH:MM-HH:MM`, which may wrap past midnight. */
export function withinHours(range: string, minute: number): boolean {
  const [from, to] = range.split("-").map((part) => {
    const [h, m] = part.split(":").map(Number);
    return (h ?? 0) * 60 + (m ?? 0);
  });
  if (from === undefined || to === undefined) return false;
  return from <= to ? minute >= from && minute < to : minute >= from || minute < to;
}
