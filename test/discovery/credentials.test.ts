/**
 * Which CSRF token to trust (spike-notes §10.3): the first-argument
 * `--csrf_token`, the `ANTIGRAVITY_*` environment of agy's children, and a
 * refusal when they disagree — without the token in the reason.
 */
import { describe, expect, it } from "vitest";
import { childEnvironment, decideToken, tokenFromArgv } from "../../src/discovery/credentials.js";

describe("tokenFromArgv", () => {
  it("trusts --csrf_token T and --csrf_token=T only as the first argument", () => {
    expect(tokenFromArgv(["/usr/local/bin/agy", "--csrf_token", "abc"])).toBe("abc");
    expect(tokenFromArgv(["/usr/local/bin/agy", "--csrf_token=abc", "--x"])).toBe("abc");
    expect(tokenFromArgv(["/usr/local/bin/agy", "--headless", "--csrf_token", "abc"])).toBeUndefined();
    expect(tokenFromArgv(["/usr/local/bin/agy"])).toBeUndefined();
  });

  it("refuses a first-argument token when the flag appears again later (it could be prompt text)", () => {
    expect(tokenFromArgv(["agy", "--csrf_token", "abc", "-p", "--csrf_token", "xyz"])).toBeUndefined();
    expect(tokenFromArgv(["agy", "--csrf_token=abc", "--csrf_token=xyz"])).toBeUndefined();
  });

  it("takes nothing from a flag without a value", () => {
    expect(tokenFromArgv(["agy", "--csrf_token"])).toBeUndefined();
    expect(tokenFromArgv(["agy", "--csrf_token="])).toBeUndefined();
    expect(tokenFromArgv(["agy", "--csrf_token", "--headless"])).toBeUndefined();
  });
});

describe("childEnvironment", () => {
  it("reads the token, the plain port and the version agy gives its children", () => {
    const env = new Map([
      ["ANTIGRAVITY_CSRF_TOKEN", "tok"],
      ["ANTIGRAVITY_LS_ADDRESS", "localhost:43605"],
      ["ANTIGRAVITY_LS_VERSION", "cli-1.2.3"],
    ]);
    expect(childEnvironment(env)).toEqual({ token: "tok", lsPort: 43605, version: "1.2.3" });
  });

  it("ignores a non-loopback or malformed address and empty values", () => {
    expect(childEnvironment(new Map([["ANTIGRAVITY_LS_ADDRESS", "10.0.0.1:80"]]))).toEqual({});
    expect(
      childEnvironment(
        new Map([
          ["ANTIGRAVITY_LS_ADDRESS", "localhost:"],
          ["ANTIGRAVITY_CSRF_TOKEN", ""],
        ]),
      ),
    ).toEqual({});
  });
});

describe("decideToken", () => {
  it("agrees when every sighting carries the same token", () => {
    expect(
      decideToken([
        { where: "argv", token: "t" },
        { where: "child 9", token: "t" },
      ]),
    ).toEqual({ kind: "found", token: "t", where: ["argv", "child 9"] });
    expect(decideToken([])).toEqual({ kind: "none" });
  });

  it("refuses two different tokens, naming where they were seen but neither token", () => {
    const decision = decideToken([
      { where: "its first argument", token: "secret-one" },
      { where: "child pid 9", token: "secret-two" },
    ]);
    expect(decision.kind).toBe("conflict");
    const reason = decision.kind === "conflict" ? decision.reason : "";
    expect(reason).toContain("its first argument");
    expect(reason).toContain("child pid 9");
    expect(reason).not.toContain("secret-one");
    expect(reason).not.toContain("secret-two");
  });
});
