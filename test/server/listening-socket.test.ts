/**
 * What `serve` and `mcp --http` hold and say about their listening socket:
 * connection limits taken from this process's descriptor limit (a real
 * limits file in the form of `/proc/self/limits`), and errors of the
 * listening socket said once a minute per kind.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectionLimitsOfProcess, listeningErrorReporter } from "../../src/server/index.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function limitsFile(openFiles: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agy-limits-"));
  dirs.push(dir);
  const file = join(dir, "limits");
  await writeFile(
    file,
    [
      "Limit                     Soft Limit           Hard Limit           Units     ",
      "Max cpu time              unlimited            unlimited            seconds   ",
      `Max open files            ${openFiles.padEnd(20)} 1048576              files     `,
      "Max locked memory         8388608              8388608              bytes     ",
      "",
    ].join("\n"),
  );
  return file;
}

describe("connection limits of this process", () => {
  it("holds well under the soft descriptor limit", async () => {
    expect(await connectionLimitsOfProcess(await limitsFile("1024"))).toEqual({ total: 448, perAddress: 256 });
    expect(await connectionLimitsOfProcess(await limitsFile("unlimited"))).toEqual({ total: 4096, perAddress: 256 });
    expect(await connectionLimitsOfProcess(await limitsFile("100"))).toEqual({ total: 32, perAddress: 32 });
  });

  it("keeps the common default where there is no limits file", async () => {
    expect(await connectionLimitsOfProcess(join(tmpdir(), "no-such-dir-agy", "limits"))).toEqual({ total: 448, perAddress: 256 });
  });

  it("reads this machine's own limits", async () => {
    const limits = await connectionLimitsOfProcess();
    expect(limits.total).toBeGreaterThanOrEqual(32);
    expect(limits.total).toBeLessThanOrEqual(4096);
    expect(limits.perAddress).toBeLessThanOrEqual(limits.total);
  });
});

describe("the listening socket's error reporter", () => {
  const error = (code: string, message: string) => Object.assign(new Error(message), { code }) as NodeJS.ErrnoException;

  it("says each kind of error once a minute, with a hint for running out of descriptors", () => {
    const said: string[] = [];
    let clock = 1_000_000;
    const report = listeningErrorReporter(
      (sentence) => said.push(sentence),
      () => clock,
    );
    report(error("EMFILE", "accept EMFILE"));
    report(error("EMFILE", "accept EMFILE"));
    clock += 59_999;
    report(error("EMFILE", "accept EMFILE"));
    report(error("ECONNRESET", "read ECONNRESET"));
    expect(said).toEqual([
      "the listening socket reported EMFILE (accept EMFILE); still serving — too many open files: raise the limit (ulimit -n) or find who holds connections open",
      "the listening socket reported ECONNRESET (read ECONNRESET); still serving",
    ]);
    clock += 1;
    report(error("EMFILE", "accept EMFILE"));
    expect(said).toHaveLength(3);
    expect(said[2]).toContain("EMFILE");
  });
});
