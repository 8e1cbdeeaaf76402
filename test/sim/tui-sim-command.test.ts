/** The `agy-bridge sim` command in-process: options, help, headless output, and that the token never shows. */
import { describe, expect, it } from "vitest";
import { createSimCommand, parseSimArgs } from "../../src/cli/sim-command.js";
import { captureIo, runCommand, runMain } from "../support/cli-io.js";

const TOKEN = "never-print-me-7a1";

describe("agy-bridge sim", () => {
  it("documents every option in --help", async () => {
    const run = await runMain(["sim", "--help"]);
    expect(run.code).toBe(0);
    for (const flag of [
      "--csrf_token",
      "--csrf-token",
      "--listen-fds",
      "--headless",
      "--scenarios",
      "--interaction-timeout",
      "--speed",
      "--as-agy",
      "--tui-version",
      "--tui-digits",
      "--trust-prompt",
    ]) {
      expect(run.stdout).toContain(flag);
    }
  });

  it("rejects an unknown option with exit 2 and a one-line reason", async () => {
    const run = await runMain(["sim", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("agy-bridge sim: unknown option --bogus; run `agy-bridge sim --help`\n");
  });

  it("parses both token spellings, fds and numbers", () => {
    expect(parseSimArgs(["--csrf-token", TOKEN, "--listen-fds", "3,4", "--speed=0", "--interaction-timeout", "500", "--headless"])).toEqual({
      csrfToken: TOKEN,
      listenFds: { tls: 3, plain: 4 },
      speed: 0,
      interactionTimeoutMs: 500,
      headless: true,
      asAgy: false,
      noCsrf: false,
    });
    expect(parseSimArgs([`--csrf_token=${TOKEN}`, "--as-agy"])).toMatchObject({ csrfToken: TOKEN, asAgy: true });
    expect(parseSimArgs(["--as-agy", "--no-csrf"])).toMatchObject({ asAgy: true, noCsrf: true });
    expect(parseSimArgs(["--as-agy", "--no-csrf"]).csrfToken).toBeUndefined();
    expect(() => parseSimArgs(["--listen-fds", "3"])).toThrow(/two file descriptors/);
    expect(() => parseSimArgs(["--listen-fds", "3,x"])).toThrow(/two file descriptors/);
    expect(() => parseSimArgs(["--speed", "fast"])).toThrow(/--speed wants a number/);
    expect(() => parseSimArgs(["--interaction-timeout", "1.5"])).toThrow(/--interaction-timeout wants/);
    expect(() => parseSimArgs(["--as-agy", "--listen-fds", "3,4"])).toThrow(/cannot be combined/);
  });

  it("parses the TUI's look: --tui-version, --tui-digits and --trust-prompt, and forwards nothing when they are absent", () => {
    expect(parseSimArgs(["--tui-version", "1.2.1", "--tui-digits", "accept", "--trust-prompt"])).toMatchObject({
      tuiVersion: "1.2.1",
      tuiDigits: "accept",
      trustPrompt: true,
    });
    expect(parseSimArgs(["--tui-version=1.0", "--tui-digits=ignore"])).toMatchObject({ tuiVersion: "1.0", tuiDigits: "ignore" });
    const plain = parseSimArgs([]);
    expect([plain.tuiVersion, plain.tuiDigits, plain.trustPrompt]).toEqual([undefined, undefined, undefined]);
    expect(() => parseSimArgs(["--tui-version", "1.3"])).toThrow("--tui-version wants one of 1.0, 1.1, 1.2.1");
    expect(() => parseSimArgs(["--tui-digits", "yes"])).toThrow("--tui-digits wants one of accept, ignore");
  });

  it("answers contradictory or empty token options with exit 2, never echoing a value", async () => {
    for (const argv of [
      ["sim", "--as-agy", "--no-csrf", "--csrf_token", TOKEN],
      ["sim", "--csrf_token", TOKEN, "--csrf-token", TOKEN],
      ["sim", "--csrf-token="],
      ["sim", "--speed", TOKEN],
      ["sim", "--listen-fds", TOKEN],
      ["sim", "--csrf-tokn", TOKEN],
    ]) {
      const run = await runMain(argv);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^agy-bridge sim: [^\n]+\n$/);
      expect(run.stdout + run.stderr).not.toContain(TOKEN);
    }
  });

  it("takes --csrf_token=--help as a token, not as a request for help", () => {
    expect(parseSimArgs(["--csrf_token=--help"]).csrfToken).toBe("--help");
  });

  it("prints one JSON line headless, without the token, and stops when the signal aborts", async () => {
    const run = captureIo(["--headless", "--csrf_token", TOKEN, "--speed", "0"]);
    const command = createSimCommand({ self: () => ({ node: "/usr/bin/node", args: ["bin.js"], pid: 4242 }) });
    const exit = command.run(run.io);
    await expect.poll(() => run.stdout().includes("\n"), { timeout: 10_000, interval: 20 }).toBe(true);
    const info = JSON.parse(run.stdout()) as Record<string, unknown>;
    expect(info).toMatchObject({
      pid: 4242,
      csrfTokenPresent: true,
      tlsUrl: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
      plainUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    expect(typeof info.conversationId).toBe("string");
    const res = await fetch(`${info.plainUrl as string}/exa.language_server_pb.LanguageServerService/Heartbeat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    run.abort();
    expect(await exit).toBe(0);
    expect(run.stdout() + run.stderr()).not.toContain(TOKEN);
  });

  it("fails with exit 1 and a reason when the scenarios directory does not exist", async () => {
    const run = await runCommand(createSimCommand(), ["--headless", "--scenarios", "/nonexistent/agy-scenarios"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^agy-bridge sim: .+\n$/);
  });
});
