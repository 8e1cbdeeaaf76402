/**
 * The only door discovery uses into `/proc`: three reads under an injectable
 * root, so tests and benchmarks can point discovery at a hand-made tree and
 * the real one alike. Failures come back as a reason, never a throw.
 */
import { readFileSync } from "node:fs";
import { readdir, readFile, readlink, open } from "node:fs/promises";
import { join } from "node:path";

export type ProcRead<T> = { ok: true; value: T } | { ok: false; code: string };

export interface ProcSource {
  /** The root it reads, e.g. `/proc`. */
  readonly root: string;
  /** Text of `<root>/<path>`; at most `maxBytes` from the start (default 1 MiB). */
  read(path: string, maxBytes?: number): Promise<ProcRead<string>>;
  /** Text of the last `maxBytes` of an absolute file path (a log), outside the root. */
  readTail(absolutePath: string, maxBytes: number): Promise<ProcRead<string>>;
  readlink(path: string): Promise<ProcRead<string>>;
  readdir(path: string): Promise<ProcRead<string[]>>;
  /**
   * The same as {@link read}, synchronously, for a small file that never
   * waits (a pid's `stat`); optional, `read` is used without it. Scanning
   * every pid's stat each refresh through the thread pool cost an idle relay
   * more than the reads themselves (one profile: 63 ms of reading and 87 ms
   * of garbage collection over 35 s of an idle relay).
   */
  readNow?(path: string, maxBytes?: number): ProcRead<string>;
}

const DEFAULT_MAX_BYTES = 1024 * 1024;

/** A {@link ProcSource} over the real file system, rooted at `root` (default `/proc`). */
export function createProcSource(root = "/proc"): ProcSource {
  const at = (path: string) => join(root, path);
  return {
    root,
    read: (path, maxBytes = DEFAULT_MAX_BYTES) => guard(async () => await readBounded(at(path), maxBytes, false)),
    readTail: (absolutePath, maxBytes) => guard(() => readBounded(absolutePath, maxBytes, true)),
    readlink: (path) => guard(() => readlink(at(path))),
    readdir: (path) => guard(() => readdir(at(path))),
    readNow: (path, maxBytes = DEFAULT_MAX_BYTES) => {
      try {
        const text = readFileSync(at(path), "utf8");
        return { ok: true, value: text.length > maxBytes ? text.slice(0, maxBytes) : text };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        return { ok: false, code: typeof code === "string" ? code : "EIO" };
      }
    },
  };
}

async function guard<T>(work: () => Promise<T>): Promise<ProcRead<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ok: false, code: typeof code === "string" ? code : "EIO" };
  }
}

/** /proc files report size 0, so a plain readFile is the only way for them; logs are read from the end. */
async function readBounded(path: string, maxBytes: number, tail: boolean): Promise<string> {
  if (!tail) {
    const text = await readFile(path, "utf8");
    return text.length > maxBytes ? text.slice(0, maxBytes) : text;
  }
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } finally {
    await handle.close();
  }
}
