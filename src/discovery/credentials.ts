/**
 * Where a language server's CSRF token comes from, and which one to trust
 * (spike-notes §10.3). Pure: the callers read `/proc` and hand over text.
 *
 * Trust order: agy's own launch argument `--csrf_token` only when it is the
 * FIRST argument (a later one may be part of a prompt), then the
 * `ANTIGRAVITY_CSRF_TOKEN` that agy puts in the environment of the processes
 * it spawns. Two different tokens for one server are refused, never guessed.
 * Nothing here ever puts a token into a message.
 */

/** One place a token was seen; `where` is safe to print, `token` never is. */
export interface TokenSighting {
  where: string;
  token: string;
}

/** What agy's children carry in their environment (agy 1.2.x, spike-notes §10.3). */
export interface ChildEnvironment {
  token?: string;
  /** From `ANTIGRAVITY_LS_ADDRESS=localhost:<port>` (the plain HTTP listener). */
  lsPort?: number;
  /** From `ANTIGRAVITY_LS_VERSION=cli-<ver>`. */
  version?: string;
}

export type TokenDecision = { kind: "none" } | { kind: "found"; token: string; where: string[] } | { kind: "conflict"; reason: string };

const FLAG = "--csrf_token";

/**
 * The token of `argv` (argv[0] is the executable) when `--csrf_token T` or
 * `--csrf_token=T` is the first argument and the flag appears nowhere else.
 */
export function tokenFromArgv(argv: readonly string[]): string | undefined {
  const first = argv[1];
  if (first === undefined) return undefined;
  let token: string | undefined;
  let rest: readonly string[];
  if (first === FLAG) {
    token = argv[2];
    rest = argv.slice(3);
  } else if (first.startsWith(`${FLAG}=`)) {
    token = first.slice(FLAG.length + 1);
    rest = argv.slice(2);
  } else {
    return undefined;
  }
  if (token === undefined || token === "" || token.startsWith("--")) return undefined;
  // A second flag makes the first ambiguous: either could be prompt text.
  if (rest.some((arg) => arg === FLAG || arg.startsWith(`${FLAG}=`))) return undefined;
  return token;
}

/** Reads the `ANTIGRAVITY_*` variables agy gives the processes it spawns. */
export function childEnvironment(env: ReadonlyMap<string, string>): ChildEnvironment {
  const out: ChildEnvironment = {};
  const token = env.get("ANTIGRAVITY_CSRF_TOKEN");
  if (token !== undefined && token !== "") out.token = token;
  const address = env.get("ANTIGRAVITY_LS_ADDRESS");
  const port = address === undefined ? undefined : /^(?:localhost|127\.0\.0\.1|\[::1\]):(\d{1,5})$/.exec(address)?.[1];
  if (port !== undefined && Number(port) > 0 && Number(port) <= 65535) out.lsPort = Number(port);
  const version = env.get("ANTIGRAVITY_LS_VERSION");
  if (version !== undefined && version !== "") out.version = version.replace(/^cli-/, "");
  return out;
}

/** One token when every sighting agrees; a conflict (naming only the places) when they differ. */
export function decideToken(sightings: readonly TokenSighting[]): TokenDecision {
  if (sightings.length === 0) return { kind: "none" };
  const distinct = new Set(sightings.map((s) => s.token));
  if (distinct.size > 1) {
    return {
      kind: "conflict",
      reason: `${distinct.size} different CSRF tokens were found (${sightings.map((s) => s.where).join(", ")}), so none is used; pass the right one with --csrf-token`,
    };
  }
  return { kind: "found", token: sightings[0]!.token, where: sightings.map((s) => s.where) };
}
