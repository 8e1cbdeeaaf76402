import { describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";

describe("agy-bridge relay flags", () => {
  it("prints its help with the stream names and every flag", async () => {
    const run = await runMain(["relay", "--help"]);
    expect(run.code).toBe(0);
    for (const text of ["--redis URL", "--host NAME", "--claim-idle MS", "agy:commands:<host>", "agy:results:<host>", "agy:sessions"])
      expect(run.stdout).toContain(text);
  });

  it.each([
    [[], /--redis URL is required/],
    [["--redis", "http://127.0.0.1:6379"], /must be a redis:\/\/ or rediss:\/\/ URL/],
    [["--redis", "not a url"], /does not parse as a URL/],
    [["--redis", "redis://127.0.0.1:1", "--host", "a:b"], /--host must be letters, digits/],
    [["--redis", "redis://127.0.0.1:1", "--claim-idle", "soon"], /--claim-idle wants a whole number/],
    [["--redis", "redis://127.0.0.1:1/x"], /names a database that is not a number/],
  ])("refuses %j with exit 2 and a sentence", async (args, reason) => {
    const run = await runMain(["relay", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(reason);
  });

  it("says it cannot reach Redis, with exit 1, when nothing listens", async () => {
    const { createServer } = await import("node:net");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const run = await runMain(["relay", "--redis", `redis://127.0.0.1:${port}`, "--host", "h1", "--url", "http://127.0.0.1:9"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`cannot reach Redis at redis://127\\.0\\.0\\.1:${port}`));
  });
});
