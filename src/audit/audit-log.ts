/**
 * The append-only decision log: one JSON line per decision, each written
 * and `fsync`ed before `append` resolves (a crash loses no recorded
 * decision), rotated by size (`audit.jsonl` → `audit.jsonl.1` → … up to
 * `keep` old files). Readers see the rotated files oldest first.
 */
import { mkdir, open, readFile, rename, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { AgyBridgeError } from "../errors.js";
import type { AuditRecord } from "./audit-record.js";

export interface AuditLogOptions {
  /** The log file; see {@link defaultAuditPath}. */
  path: string;
  /** Rotate before a line would take the file past this size; default 10 MiB. */
  maxBytes?: number;
  /** Rotated files kept; default 5. */
  keep?: number;
  /** Default `() => new Date()`. */
  now?: () => Date;
  /** Default the machine's hostname. */
  host?: string;
}

/** A record as callers give it: time and host are filled in. */
export type AuditEntry = Omit<AuditRecord, "time" | "host">;

export interface AuditLog {
  readonly path: string;
  /** Appends one line and syncs it to disk; failures reject with a sentence. */
  append(entry: AuditEntry): Promise<void>;
  /**
   * Whether a recent record (the log's last 256 KiB) answers `interactionId`
   * with something other than `ask` — written by any process sharing the log.
   */
  answered(interactionId: string): Promise<boolean>;
}

/** `$XDG_STATE_HOME/agy-bridge/audit.jsonl`, else `~/.local/state/agy-bridge/audit.jsonl`. */
export function defaultAuditPath(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const state = env["XDG_STATE_HOME"] !== undefined && env["XDG_STATE_HOME"] !== "" ? env["XDG_STATE_HOME"] : join(home, ".local", "state");
  return join(state, "agy-bridge", "audit.jsonl");
}

export function createAuditLog(options: AuditLogOptions): AuditLog {
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const keep = options.keep ?? 5;
  const now = options.now ?? (() => new Date());
  const host = options.host ?? hostname();
  const path = options.path;
  let chain: Promise<void> = Promise.resolve();
  let ready: Promise<void> | undefined;

  const write = async (line: string): Promise<void> => {
    ready ??= mkdir(dirname(path), { recursive: true, mode: 0o700 }).then(() => undefined);
    await ready;
    const size = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    if (size > 0 && size + Buffer.byteLength(line) > maxBytes) await rotate(path, keep);
    const file = await open(path, "a", 0o600);
    try {
      await file.write(line);
      await file.sync();
    } finally {
      await file.close();
    }
  };

  return {
    path,
    append(entry) {
      const record: AuditRecord = { time: now().toISOString(), host, ...entry };
      const line = `${JSON.stringify(record)}\n`;
      const next = chain.then(() => write(line));
      chain = next.catch(() => undefined);
      return next.catch((error: unknown) => {
        const code = (error as NodeJS.ErrnoException).code ?? "an error";
        throw new AgyBridgeError("internal", `Could not write the audit log ${path} (${code}); check that its directory is writable.`, { cause: error });
      });
    },
    async answered(interactionId) {
      await chain;
      const tail = await readTail(path, 256 * 1024);
      const needle = `"interactionId":${JSON.stringify(interactionId)}`;
      // An `ask` or a `notify` (a webhook delivery) is not an answer.
      return tail.split("\n").some((line) => line.includes(needle) && !line.includes('"decision":"ask"') && !line.includes('"decision":"notify"'));
    },
  };
}

async function readTail(path: string, bytes: number): Promise<string> {
  let file;
  try {
    file = await open(path, "r");
  } catch {
    return "";
  }
  try {
    const { size } = await file.stat();
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } finally {
    await file.close();
  }
}

async function rotate(path: string, keep: number): Promise<void> {
  for (let n = keep - 1; n >= 1; n--) {
    await rename(`${path}.${n}`, `${path}.${n + 1}`).catch(() => undefined);
  }
  if (keep >= 1) await rename(path, `${path}.1`).catch(() => undefined);
}

export interface AuditQuery {
  /** Only records at or after this time. */
  since?: Date;
  conversationId?: string;
  /** Rotated files to look through; default 5. */
  keep?: number;
}

export interface AuditReading {
  records: AuditRecord[];
  /** Lines that were not audit records (a torn write, an edit by hand), by file and line. */
  skipped: Array<{ file: string; line: number }>;
  /** Every conversation id the files name, whatever the query (for resolving a prefix of one), in order of first appearance. */
  conversationIds: string[];
}

/** Reads the log and its rotated files, oldest first. A missing log reads as empty. */
export async function readAuditLog(path: string, query: AuditQuery = {}): Promise<AuditReading> {
  const keep = query.keep ?? 5;
  const files = [...Array.from({ length: keep }, (_, i) => `${path}.${keep - i}`), path];
  const out: AuditReading = { records: [], skipped: [], conversationIds: [] };
  const ids = new Set<string>();
  const since = query.since?.getTime();
  // The schema (and zod) load for a reading only: writing a record, as an answer command does, needs neither.
  const { AuditRecordSchema } = await import("./audit-record.js");
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text === undefined) continue;
    text.split("\n").forEach((line, index) => {
      if (line.trim() === "") return;
      let parsed;
      try {
        parsed = AuditRecordSchema.safeParse(JSON.parse(line));
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || !parsed.success) {
        out.skipped.push({ file, line: index + 1 });
        return;
      }
      const record = parsed.data;
      if (!ids.has(record.conversationId)) {
        ids.add(record.conversationId);
        out.conversationIds.push(record.conversationId);
      }
      if (since !== undefined && !(Date.parse(record.time) >= since)) return;
      if (query.conversationId !== undefined && record.conversationId !== query.conversationId) return;
      out.records.push(record);
    });
  }
  return out;
}
