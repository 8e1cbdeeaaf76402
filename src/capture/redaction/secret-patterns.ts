/**
 * What is secret in any text, whatever field or screen row it sits in:
 * credentials (agy's CSRF token, OAuth access and refresh tokens, API keys
 * of Google, AWS, GitHub, GitLab, npm, Stripe, Slack, OpenAI and Anthropic,
 * bearer and Basic credentials, credentials in URLs, PEM private keys,
 * JWTs, the values of `password=`, `…_TOKEN=`, `client_secret=` and their
 * kin), e-mail addresses, absolute paths under a home
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

/**
 * Key words whose value is a credential, however they are spelled: `password=`,
 * `DB_PASSWORD=`, `GITHUB_TOKEN=`, `?access_token=`, `client_secret=`,
 * `"apiKey": "…"`, `aws_secret_access_key = …`. No word boundary before the
 * key word: `_` is a word character, so `\b` would let `DB_PASSWORD` through.
 * `tokens` (counts) is not a key word: the value must follow the word itself.
 */
const SECRET_KEY_WORDS = String.raw`(?:token|secret|password|passwd|passphrase|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth|signature)`;

/** A value stops at whitespace, quotes, and the separators of URLs, lists and statements. */
const VALUE = String.raw`[^\s"'\x60,;&<>]`;

/** A token prefix may follow anything but a letter or digit (`_` included: `X_ghp_…`). */
const START = String.raw`(?<![A-Za-z0-9])`;

/**
 * Patterns whose whole match is the secret (replaced by `x` × its length).
 * None of them matches whitespace, so a secret is always one token of the
 * text: {@link committedText} relies on it.
 */
const TOKEN_PATTERNS: readonly RegExp[] = [
  new RegExp(String.raw`${START}ya29\.[0-9A-Za-z_-]+`, "g"), // Google OAuth access token
  new RegExp(String.raw`${START}1\/\/[0-9A-Za-z_-]{20,}`, "g"), // Google OAuth refresh token
  new RegExp(String.raw`${START}eyJ[0-9A-Za-z_-]{5,}\.[0-9A-Za-z_-]{5,}\.[0-9A-Za-z_-]*`, "g"), // JWT
  new RegExp(String.raw`${START}AIza[0-9A-Za-z_-]{30,}`, "g"), // Google API key
  new RegExp(String.raw`${START}(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}(?![A-Za-z0-9])`, "g"), // AWS access key id
  new RegExp(String.raw`${START}gh[pousr]_[A-Za-z0-9]{20,}`, "g"), // GitHub tokens
  new RegExp(String.raw`${START}github_pat_[A-Za-z0-9_]{20,}`, "g"), // GitHub fine-grained token
  new RegExp(String.raw`${START}gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|agent|oas)-[0-9A-Za-z_-]{16,}`, "g"), // GitLab tokens
  new RegExp(String.raw`${START}npm_[A-Za-z0-9]{20,}`, "g"), // npm token
  new RegExp(String.raw`${START}(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{8,}`, "g"), // Stripe keys
  new RegExp(String.raw`${START}whsec_[0-9A-Za-z]{16,}`, "g"), // Stripe webhook secret
  new RegExp(String.raw`${START}sk-[A-Za-z0-9_-]{20,}`, "g"), // OpenAI, Anthropic
  new RegExp(String.raw`${START}xox[a-z]-[A-Za-z0-9-]{10,}`, "g"), // Slack tokens
  new RegExp(String.raw`${START}xapp-[A-Za-z0-9-]{10,}`, "g"), // Slack app token
  /(?<=hooks\.slack\.com\/services\/)[A-Za-z0-9/]+/g, // Slack webhook path
  // https://user:pass@host, https://TOKEN@host: the credentials before the @.
  /(?<=\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s\/@"'\x60<>?#]+(?=@[^\s\/@"'\x60<>]+)/g,
  // Authorization: Basic …, Authorization: Bearer …, authorization=token …
  new RegExp(String.raw`(?<=authorization["']?\s*[=:]\s*["']?(?:[A-Za-z]+\s+)?)(?!(?:basic|bearer|token|digest|negotiate)\s)${VALUE}+`, "gi"),
  new RegExp(String.raw`(?<=\b(?:bearer|basic)\s+)${VALUE}{6,}`, "gi"),
  // curl -u user:pass, --user=user:pass
  new RegExp(String.raw`(?<=(?:^|\s)(?:-u|--user)(?:\s+|=)[^\s:"']*:)${VALUE}+`, "g"),
  // --csrf_token T, x-codeium-csrf-token: T, ANTIGRAVITY_CSRF_TOKEN=T, "csrfToken":"T"
  /(?<=csrf[_-]?token["']?\s*[=:\s]\s*["']?)[A-Za-z0-9_\-./+]{8,}/gi,
  new RegExp(String.raw`(?<=${SECRET_KEY_WORDS}["']?\s*[=:]\s*["']?)${VALUE}{3,}`, "gi"),
];

/**
 * A PEM private key (RSA, EC, OpenSSH, PGP, …): the BEGIN line stays, every
 * other character up to the end of the END line — or of the text, when the
 * block is not closed yet — becomes `x`, whitespace kept.
 */
const PEM = /(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)([\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$))/g;

const EMAIL = /\b[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)\b/g;
const PATH_CHARS = String.raw`[^\s'"\x60<>()\[\]{},;|\\]`;

/** Replaces every secret in `text` (see the file comment). */
export function scrubText(text: string, ctx: ScrubContext): string {
  let out = text;
  for (const secret of ctx.secrets) out = out.split(secret).join(maskOpaque(secret));
  out = out.replace(PEM, (_whole: string, begin: string, body: string) => begin + body.replace(/\S/g, "x"));
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

/**
 * The part of a text still being written that is safe to redact now: up to
 * and including its last whitespace. The last token may still grow into a
 * secret (`ghp_ab` → `ghp_abc…`, `alice@exa` → `alice@example.com`), so it
 * waits for the whitespace after it or for the text to be complete. Every
 * pattern above matches within one token (a PEM block is masked to the end
 * of what there is), so the redaction of this prefix is a prefix of the
 * redaction of every longer text: redaction is prefix-stable.
 */
export function committedText(text: string): string {
  const last = Math.max(text.lastIndexOf(" "), text.lastIndexOf("\n"), text.lastIndexOf("\t"), text.lastIndexOf("\r"));
  return last < 0 ? "" : text.slice(0, last + 1);
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
