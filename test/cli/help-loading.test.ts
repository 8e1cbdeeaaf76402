/**
 * `agy-bridge <command> --help` loads the command's help, not its runtime
 * (issue #36): the CLI runs as a real child process from source with the
 * loader hook of support/record-modules.mjs, and each case names what its
 * help must not load. No timing: only what was loaded.
 *
 * A positive control runs one of the same commands for real (against a
 * closed port), so an absence is not the recorder's blindness.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runProcess } from "../support/run-process.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "src", "cli", "bin.ts");
const RECORDER = join(ROOT, "test", "cli", "support", "record-modules.mjs");
const RPC_STACK = ["@connectrpc/connect", "@connectrpc/connect-node", "@bufbuild/protobuf"];
const UNREACHABLE = ["--url", "http://127.0.0.1:1", "--csrf-token", "t0k3n-help-loading", "--conversation", "c0ffee00-0000-4000-8000-000000000000"];

interface Loaded {
  code: number | null;
  stdout: string;
  stderr: string;
  packages: Set<string>;
  /** Our own files, relative to src/. */
  ours: string[];
}

function packageOf(module: string): string | undefined {
  const at = module.lastIndexOf("/node_modules/");
  if (at < 0) return undefined;
  const [first, second] = module.slice(at + "/node_modules/".length).split("/");
  return first?.startsWith("@") === true ? `${first}/${second ?? ""}` : first;
}

async function loadedBy(argv: readonly string[]): Promise<Loaded> {
  const dir = mkdtempSync(join(tmpdir(), "agy-bridge-help-"));
  const record = join(dir, "modules.txt");
  try {
    const { code, stdout, stderr } = await runProcess(process.execPath, ["--import", "tsx", "--import", RECORDER, BIN, ...argv], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: dir, XDG_STATE_HOME: join(dir, "state"), RECORD_MODULES_FILE: record },
    });
    const modules = existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .filter((l) => l !== "")
      : [];
    const src = `${join(ROOT, "src")}/`;
    const ours = modules
      .map((m) => (m.startsWith("file:") ? fileURLToPath(m) : m))
      .filter((p) => p.startsWith(src) && !p.includes("/node_modules/"))
      .map((p) => p.slice(src.length));
    return { code, stdout, stderr, packages: new Set(modules.map(packageOf).filter((p): p is string => p !== undefined)), ours: [...new Set(ours)] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What of `run` falls under the forbidden packages or our layers, so a failure names it. */
function forbidden(run: Loaded, packages: readonly string[], layers: readonly string[]): string[] {
  return [...packages.filter((p) => run.packages.has(p)), ...run.ours.filter((f) => layers.some((l) => f.startsWith(l)))];
}

describe("what a command's --help loads", { timeout: 60_000 }, () => {
  it.each(["approve", "deny", "answer", "interrupt"])("%s --url … --help prints its help without the session layer or the RPC stack", async (command) => {
    const run = await loadedBy([command, ...UNREACHABLE, "--help"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Usage: agy-bridge ${command}`);
    expect(forbidden(run, RPC_STACK, ["rpc/", "session/agy-session", "session/index", "discovery/", "mapper/"])).toEqual([]);
  });

  it("screen --help loads neither the tmux driver nor the RPC stack nor zod", async () => {
    const run = await loadedBy(["screen", "--help"]);
    expect(run.code, run.stderr).toBe(0);
    expect(forbidden(run, [...RPC_STACK, "zod"], ["rpc/", "tmux/tmux-driver", "tmux/spawn-tmux", "session/"])).toEqual([]);
  });

  it("screen --file reads the saved screen without the tmux driver", async () => {
    const run = await loadedBy(["screen", "--file", join(ROOT, "fixtures", "screens", "dialog-command-1.1.27.txt"), "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.ours).toContain("tmux/screen-model.ts");
    expect(forbidden(run, [...RPC_STACK, "zod"], ["tmux/tmux-driver", "tmux/spawn-tmux"])).toEqual([]);
  });

  it("the same interrupt, run for real, does load the session layer and the RPC stack (the recorder sees them)", async () => {
    const run = await loadedBy(["interrupt", ...UNREACHABLE, "--json"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.ours).toContain("rpc/client.ts");
    expect(run.ours.some((f) => f.startsWith("session/"))).toBe(true);
  });
});
