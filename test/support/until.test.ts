/** The suite's polling wait: what counts as done, what a failure says, and what a probe's error does. */
import { describe, expect, it } from "vitest";
import { until, UntilTimeout } from "./until.js";

describe("until", () => {
  it("resolves with the first value other than undefined or false, sync or async, and keeps 0, '' and null", async () => {
    let n = 0;
    expect(await until(() => (++n >= 3 ? n : undefined), "three probes", { everyMs: 1 })).toBe(3);
    let m = 0;
    expect(await until(async () => ++m >= 2, "two probes", { everyMs: 1 })).toBe(true);
    expect(await until(() => 0, "zero")).toBe(0);
    expect(await until(() => "", "the empty string")).toBe("");
    expect(await until(() => null, "null")).toBe(null);
  });

  it("calls a sync probe at once, before any timer", () => {
    let calls = 0;
    void until(() => ++calls, "a call");
    expect(calls).toBe(1);
  });

  it("fails after its bound with what it waited for and what seen() shows", async () => {
    const error = await until(() => false, "the thing", { ms: 30, everyMs: 5, seen: () => "nothing yet" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UntilTimeout);
    expect((error as UntilTimeout).message).toBe("timed out after 30 ms waiting for the thing; saw: nothing yet");
    expect(error).toMatchObject({ what: "the thing", ms: 30 });
  });

  it("still fails saying what it waited for when seen() throws", async () => {
    const error = (await until(() => false, "the thing", { ms: 10, everyMs: 5, seen: () => JSON.parse("{") as string }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^timed out after 10 ms waiting for the thing; saw: \(seen\(\) threw: .+\)$/);
  });

  it("retries a probe that throws, by default, and names its last error, from which probe, when it never succeeds", async () => {
    let n = 0;
    expect(
      await until(
        () => {
          if (++n < 3) throw new Error("not up");
          return "up";
        },
        "the server",
        { everyMs: 1 },
      ),
    ).toBe("up");
    let calls = 0;
    const error = await until(
      async () => {
        calls++;
        throw new Error("fetch failed", { cause: new Error("ECONNREFUSED") });
      },
      "the server",
      { ms: 20, everyMs: 5 },
    ).catch((e: unknown) => e as UntilTimeout);
    expect(error.message).toBe(`timed out after 20 ms waiting for the server (last error, from probe ${calls} of ${calls}: fetch failed: ECONNREFUSED)`);
    expect((error.cause as Error).message).toBe("fetch failed");
  });

  it("fails at once with the probe's own error when told errors: 'throw'", async () => {
    const started = Date.now();
    const error = await until(
      () => {
        throw new RangeError("broken");
      },
      "the thing",
      { ms: 10_000, errors: "throw" },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(Date.now() - started).toBeLessThan(5_000);
    const rejected = await until(() => Promise.reject(new TypeError("also broken")), "the thing", { ms: 10_000, errors: "throw" }).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(TypeError);
  });
});
