/**
 * Compiles the `--as-agy` launcher (agy-launcher.c) to `<outDir>/<hash>/bin/agy`.
 * The path ends in `bin/agy` because discovery matches cmdlines on that
 * (spike-notes §2.1). Builds are cached by source hash and published with a rename,
 * so concurrent builders never run a half-written binary.
 */
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { access, constants, mkdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AgyBridgeError } from "../../errors.js";

export interface BuildAgyLauncherOptions {
  /** Cache directory; the launcher lands in `<outDir>/<hash>/bin/agy`. */
  outDir: string;
  /** C compiler; default `cc` from PATH. */
  cc?: string;
  /** The C source; default the `agy-launcher.c` shipped next to this module. */
  sourcePath?: string;
  /** Environment for the compiler (PATH lookup); default: inherited. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The default location of the launcher source, beside this module. */
export const AGY_LAUNCHER_SOURCE = fileURLToPath(new URL("./agy-launcher.c", import.meta.url));

/** Builds (or reuses) the launcher and returns its absolute path. */
export async function buildAgyLauncher(options: BuildAgyLauncherOptions): Promise<string> {
  const sourcePath = options.sourcePath ?? AGY_LAUNCHER_SOURCE;
  let source: Buffer;
  try {
    source = await readFile(sourcePath);
  } catch (error) {
    throw new AgyBridgeError("internal", `cannot read the agy launcher source ${sourcePath}; reinstall agy-bridge`, { cause: error });
  }
  const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const binDir = join(options.outDir, hash, "bin");
  const target = join(binDir, "agy");
  if (await isExecutable(target)) return target;

  await mkdir(binDir, { recursive: true });
  const temporary = join(binDir, `.agy-${randomUUID()}`);
  const cc = options.cc ?? "cc";
  try {
    await compile(cc, ["-O2", "-o", temporary, sourcePath], options.env);
    await rename(temporary, target);
  } finally {
    await rm(temporary, { force: true });
  }
  return target;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function compile(cc: string, args: string[], env: BuildAgyLauncherOptions["env"]): Promise<void> {
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(cc, args, { stdio: ["ignore", "ignore", "pipe"], env: env === undefined ? undefined : { ...env } });
    } catch (error) {
      reject(new AgyBridgeError("internal", `cannot build the --as-agy launcher: ${(error as Error).message}`, { cause: error }));
      return;
    }
    let stderr = "";
    // No stderr when the spawn failed for want of fds (EMFILE): the 'error' listener settles that.
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", (error: NodeJS.ErrnoException) => {
      const message =
        error.code === "ENOENT"
          ? `cannot build the --as-agy launcher: no C compiler "${cc}" found; install one (e.g. \`apt-get install gcc\`)`
          : `cannot build the --as-agy launcher: ${error.message}`;
      reject(new AgyBridgeError("internal", message, { cause: error }));
    });
    child.on("close", (code) => {
      if (code === 0) resolve();
      else
        reject(new AgyBridgeError("internal", `the C compiler "${cc}" failed to build the --as-agy launcher (exit ${code}): ${stderr.trim().slice(0, 2000)}`));
    });
  });
}
