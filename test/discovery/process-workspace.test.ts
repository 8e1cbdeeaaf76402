/**
 * agy's working directory as discovery reads it: `/proc/<pid>/cwd` of a real
 * process, read once per pid in the background, and nothing for a process
 * that is gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkspaceReader } from "../../src/discovery/index.js";

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Ask until the answer is not undefined, or fail with what was seen after `ms`. */
async function eventually(read: () => string | undefined, ms = 10_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = read();
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`no directory after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the process workspace reader", () => {
  it("answers a running process's directory from /proc once its read has finished", async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "agy-ws-")));
    dirs.push(dir);
    const child = spawn("sleep", ["30"], { cwd: dir, stdio: "ignore" });
    children.push(child);
    const reader = createWorkspaceReader();
    expect(reader(child.pid!)).toBeUndefined();
    expect(await eventually(() => reader(child.pid!))).toBe(dir);
  });

  it("reads each pid once, and keeps nothing for a process it could not read", async () => {
    const asked: string[] = [];
    let fail = true;
    const reader = createWorkspaceReader(async (path) => {
      asked.push(path);
      if (fail) throw Object.assign(new Error("gone"), { code: "ENOENT" });
      return "/work";
    });
    expect(reader(4242)).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    fail = false;
    expect(reader(4242)).toBeUndefined();
    expect(reader(7)).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reader(7)).toBe("/work");
    expect(asked).toEqual(["/proc/4242/cwd", "/proc/7/cwd"]);
  });

  it("answers nothing for a pid that does not run", async () => {
    const child = spawn("true", [], { stdio: "ignore" });
    const pid = child.pid!;
    await new Promise((resolve) => child.once("exit", resolve));
    const asked: Array<Promise<string>> = [];
    const reader = createWorkspaceReader((path) => {
      const read = import("node:fs/promises").then((fs) => fs.readlink(path));
      asked.push(read);
      return read;
    });
    expect(reader(pid)).toBeUndefined();
    await expect(asked[0]).rejects.toMatchObject({ code: "ENOENT" });
    expect(reader(pid)).toBeUndefined();
  });
});
