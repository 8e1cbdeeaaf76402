/**
 * Paired devices: each holds a device token (from a pairing code) that
 * authenticates like the bearer token on the page's routes. The file, beside
 * the token file (`devices.json`, mode 0600), holds each device's id, name,
 * pairing time and the SHA-256 of its token — never the token itself, so the
 * file cannot be used to impersonate a device. `agy-bridge devices` edits the
 * same file; serve re-reads it when it changes, so a revocation takes effect
 * on the device's next request — and, through {@link DeviceStore.onChange}
 * (a watch on the file's directory), on its open event streams at once.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { chmod, mkdir, open, rename, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { AgyBridgeError } from "../errors.js";

export interface Device {
  id: string;
  name: string;
  /** ISO 8601. */
  pairedAt: string;
}

export interface DeviceStore {
  readonly file: string;
  /** Records a new device and returns its token (the only time the token exists outside the browser). */
  add(name?: string): Promise<{ device: Device; token: string }>;
  list(): Promise<Device[]>;
  /** False when no device has that id. */
  revoke(id: string): Promise<boolean>;
  /** The device whose token this is, if it is still paired. */
  authenticate(token: string): Promise<Device | undefined>;
  /**
   * Calls `listener` when the device file may have changed — a revocation by
   * this store or by `agy-bridge devices` in another process. Returns the
   * unsubscribe; the watch runs only while someone listens.
   */
  onChange(listener: () => void): () => void;
}

interface StoredDevice extends Device {
  tokenSha256: string;
}

/** `devices.json` in the directory of the token file. */
export function deviceFileFor(tokenFile: string): string {
  return join(dirname(tokenFile), "devices.json");
}

const TOKEN_PATTERN = /^agyd\.([0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

/** A device name as shown and recorded: printable, one line, at most 64 characters. */
export function cleanDeviceName(name: string | undefined, id: string): string {
  const clean = (name ?? "")
    .replace(/[^\p{L}\p{N} ._@()+'’-]/gu, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 64);
  return clean === "" ? `device ${id}` : clean;
}

export function createDeviceStore(options: { file: string; now?: () => Date; uid?: number }): DeviceStore {
  const { file } = options;
  const now = options.now ?? (() => new Date());
  let cache: { key: string; devices: StoredDevice[] } | undefined;
  // One writer at a time within this process; another process (the CLI) is
  // serialised by the atomic rename.
  let queue: Promise<unknown> = Promise.resolve();

  async function read(): Promise<StoredDevice[]> {
    let info;
    try {
      info = await stat(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new AgyBridgeError(
        "invalid_argument",
        `cannot read the device file ${file} (${(error as NodeJS.ErrnoException).code ?? "error"}); fix its permissions or delete it (every device then pairs again)`,
        { cause: error },
      );
    }
    const key = `${info.ino}:${info.mtimeMs}:${info.size}`;
    if (cache?.key === key) return cache.devices;
    const handle = await open(file, "r");
    try {
      const own = await handle.stat();
      if ((own.mode & 0o077) !== 0) {
        throw new AgyBridgeError(
          "invalid_argument",
          `the device file ${file} can be read by other users (mode ${(own.mode & 0o777).toString(8)}); run \`chmod 600 ${file}\``,
        );
      }
      if (options.uid !== undefined && own.uid !== options.uid) {
        throw new AgyBridgeError(
          "invalid_argument",
          `the device file ${file} belongs to another user (uid ${own.uid}), who could add devices; delete it (every device then pairs again)`,
        );
      }
      const devices = parse(await handle.readFile("utf8"), file);
      cache = { key, devices };
      return devices;
    } finally {
      await handle.close();
    }
  }

  async function write(devices: StoredDevice[]): Promise<void> {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temp, `${JSON.stringify({ version: 1, devices }, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    await chmod(temp, 0o600);
    await rename(temp, file);
    cache = undefined;
  }

  function serially<T>(work: () => Promise<T>): Promise<T> {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  }

  const hash = (token: string) => createHash("sha256").update(token).digest("hex");

  const listeners = new Set<() => void>();
  let watcher: FSWatcher | undefined;
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };
  const startWatching = () => {
    if (watcher !== undefined) return;
    try {
      // The directory, not the file: every write renames a new file over the old one.
      watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || name === basename(file)) changed();
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // No directory yet (no device paired) or no inotify: callers keep their own periodic check.
      watcher = undefined;
    }
  };

  return {
    file,
    onChange(listener) {
      listeners.add(listener);
      startWatching();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          watcher?.close();
          watcher = undefined;
        }
      };
    },
    add(name) {
      return serially(async () => {
        const devices = await read();
        const id = randomBytes(6).toString("hex");
        const token = `agyd.${id}.${randomBytes(32).toString("base64url")}`;
        const device: Device = { id, name: cleanDeviceName(name, id), pairedAt: now().toISOString() };
        await write([...devices, { ...device, tokenSha256: hash(token) }]);
        return { device, token };
      });
    },
    async list() {
      return (await read()).map(({ id, name, pairedAt }) => ({ id, name, pairedAt }));
    },
    revoke(id) {
      return serially(async () => {
        const devices = await read();
        const kept = devices.filter((d) => d.id !== id);
        if (kept.length === devices.length) return false;
        await write(kept);
        changed();
        return true;
      });
    },
    async authenticate(token) {
      const match = TOKEN_PATTERN.exec(token);
      if (match === null) return undefined;
      const device = (await read()).find((d) => d.id === match[1]);
      if (device === undefined) return undefined;
      const given = Buffer.from(hash(token), "hex");
      const expected = Buffer.from(device.tokenSha256, "hex");
      if (expected.length !== given.length || !timingSafeEqual(given, expected)) return undefined;
      return { id: device.id, name: device.name, pairedAt: device.pairedAt };
    },
  };
}

function parse(text: string, file: string): StoredDevice[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new AgyBridgeError("invalid_argument", `the device file ${file} is not JSON; delete it (every device then pairs again)`, { cause: error });
  }
  const list = (data as { devices?: unknown } | null)?.devices;
  if (!Array.isArray(list))
    throw new AgyBridgeError("invalid_argument", `the device file ${file} has no "devices" list; delete it (every device then pairs again)`);
  return list.filter(
    (d): d is StoredDevice =>
      typeof d === "object" &&
      d !== null &&
      typeof d.id === "string" &&
      typeof d.name === "string" &&
      typeof d.pairedAt === "string" &&
      typeof d.tokenSha256 === "string" &&
      /^[0-9a-f]{64}$/.test(d.tokenSha256),
  );
}
