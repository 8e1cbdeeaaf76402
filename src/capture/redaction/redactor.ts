/**
 * One capture's redactor: every step, frame, summary, answer and screen of a
 * capture goes through the same instance, so an id or a path gets the same
 * placeholder wherever it appears. Pure: what is secret comes in as options
 * (the CSRF token, the home directory, user and host names), never from the
 * environment.
 */
import { redactJson } from "./json-redaction.js";
import { redactScreen } from "./screen-redaction.js";
import { createScrubContext, scrubText } from "./secret-patterns.js";

export interface RedactorOptions {
  /** Keep prompts and model output (still scrubbed of secrets). Default false: same-length masks. */
  keepText?: boolean;
  /** Keep command lines and outputs (still scrubbed of secrets). Default false. */
  keepCommands?: boolean;
  /** Exact strings that must never survive: agy's CSRF token, any token the caller knows. */
  secrets?: readonly string[];
  /** The home directory whose paths are replaced whole. */
  home?: string;
  users?: readonly string[];
  hosts?: readonly string[];
}

export interface Redactor {
  /** A redacted copy of agy JSON (a step, a frame, a summary, an answer). */
  json<T>(value: T): T;
  /** A redacted copy of a screen: every row keeps its length. */
  screen(text: string): string;
  /** A free-standing string of ours (a version, a platform): scrubbed of secrets, not masked. */
  text(value: string): string;
  /** An id alone (a conversation id for `meta.json`): its consistent placeholder. */
  id(value: string): string;
}

export function createRedactor(options: RedactorOptions = {}): Redactor {
  const ctx = createScrubContext({
    secrets: options.secrets ?? [],
    users: options.users ?? [],
    hosts: options.hosts ?? [],
    ...(options.home === undefined ? {} : { home: options.home }),
  });
  const keepText = options.keepText === true;
  const keepCommands = options.keepCommands === true;
  const commandWords = new Set<string>();
  const json = { keepText, keepCommands, commandWords };
  return {
    json: <T>(value: T): T => redactJson(value, ctx, json) as T,
    screen: (text) => redactScreen(text, ctx, { keepText, keepCommands, commandWords }),
    text: (value) => scrubText(value, ctx),
    id: (value) => {
      const scrubbed = scrubText(value, ctx);
      return scrubbed !== value ? scrubbed : ctx.placeholders.id(value);
    },
  };
}
