/**
 * What is secret in any text, whatever field or screen row it sits in:
 * credentials (agy's CSRF token, OAuth access and refresh tokens, API keys,
 * bearer tokens, JWTs), e-mail addresses, absolute paths under a home
 * directory, UUIDs (agy's ids, consistently replaced), and the user and host
 * names a capture is told about. Every replacement has the length of what it
 * replaces.
 */
import { createPlaceholders, UUID, type Placeholders } from "./placeholders.js";
import { maskOpaque } from "./text-mask.js";

export interface ScrubContext {
  readonly placeholders: Placeholders;
  /** Exact strings that must never survive (agy's CSRF token). */
  readonly secrets: readonly string[];
  /** The home directory (`/home/alice`); `/home/*`, `/Users/*` and `/root` are treated as homes too. */
  readonly home?: string | undefined;
  /** User names to replace wherever they stand as a word. */
  readonly users: readonly string[];
  /** Host names to replace wherever they stand as a word (case-insensitive). */
  readonly hosts: readonly string[];
}

export function createScrubContext(options: Partial<Omit<ScrubContext, "placeholders">> = {}): ScrubContext {
  const home = options.home !== undefined && options.home.length > 1 ? options.home.replace(/\/+$/, "") : undefined;
  const users = new Set((options.users ?? []).filter((u) => u.length >= 2));
  const homeUser = home === undefined ? undefined : /^\/(?:home|Users)\/([^/]+)$/.exec(home)?.[1];
  if (homeUser !== undefined) users.add(homeUser);
  return {
    placeholders: createPlaceholders(),
    secrets: (options.secrets ?? []).filter((s) => s.length >= 4),
    home,
    users: [...users],
    hosts: (options.hosts ?? []).filter((h) => h.length >= 2 && h !== "localhost"),
  };
}

const TOKEN_PATTERNS: readonly RegExp[] = [
  /\bya29\.[0-9A-Za-z_-]+/g, // Google OAuth access token
  /\b1\/\/[0-9A-Za-z_-]{20,}/g, // Google OAuth refresh token
  /\beyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]*/g, // JWT
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google API key
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /(?<=\b[Bb]earer\s+)[^\s"'`,;]{6,}/g,
  // --csrf_token T, x-codeium-csrf-token: T, ANTIGRAVITY_CSRF_TOKEN=T, "csrfToken":"T", password=…
  /(?<=csrf[_-]?token["']?\s*[=:\s]\s*["']?)[A-Za-z0-9_\-./+]{8,}/gi,
  /(?<=\b(?:token|secret|password|passwd|api[_-]?key)["']?\s*[=:]\s*["']?)[A-Za-z0-9_\-./+]{8,}/gi,
];

const EMAIL = /\b[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)\b/g;
const PATH_CHARS = String.raw`[^\s'"\x60<>()\[\]{},;|\\]`;

/** Replaces every secret in `text` (see the file comment). */
export function scrubText(text: string, ctx: ScrubContext): string {
  let out = text;
  for (const secret of ctx.secrets) out = out.split(secret).join(maskOpaque(secret));
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, maskOpaque);
  out = out.replace(EMAIL, (whole: string, domain: string) => {
    const local = whole.slice(0, whole.length - domain.length - 1);
    return `${ctx.placeholders.user(local)}@${ctx.placeholders.host(domain)}`;
  });
  out = out.replace(homePaths(ctx.home), (path: string) => placeholderPath(path, ctx));
  out = out.replace(UUID, (id) => ctx.placeholders.uuid(id));
  for (const host of ctx.hosts) out = out.replace(wordPattern(host, "gi"), (h) => ctx.placeholders.host(h));
  for (const user of ctx.users) out = out.replace(wordPattern(user, "g"), (u) => ctx.placeholders.user(u));
  return out;
}

function homePaths(home: string | undefined): RegExp {
  const roots = [String.raw`/home/[^/\s'"\x60<>()]+`, String.raw`/Users/[^/\s'"\x60<>()]+`, "/root"];
  if (home !== undefined) roots.unshift(escapeRegExp(home));
  return new RegExp(String.raw`(?<![\w.~-])(?:${roots.join("|")})(?=/|$|[^\w.-])(?:/${PATH_CHARS}*)*`, "g");
}

/**
 * A path under a home replaced whole by one of the same depth and length:
 * `/home/alice/work/app/notes.md` → `/home/ubuuu/baaa/caa/daaaa.md`. `/home`,
 * `/Users` and `/root` stay; every segment below is replaced consistently.
 */
function placeholderPath(path: string, ctx: ScrubContext): string {
  const parts = path.split("/");
  return parts
    .map((part, i) => {
      if (part === "" || part === "." || part === "..") return part;
      if (i === 1 && (part === "home" || part === "Users" || part === "root")) return part;
      if (i === 2 && (parts[1] === "home" || parts[1] === "Users")) return ctx.placeholders.user(part);
      return ctx.placeholders.segment(part);
    })
    .join("/");
}

function wordPattern(word: string, flags: string): RegExp {
  return new RegExp(String.raw`(?<![\p{L}\p{N}_])${escapeRegExp(word)}(?![\p{L}\p{N}_])`, `${flags}u`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
