/**
 * The campaign runner sorts outcomes correctly and replays an input from its
 * seed and index: a fuzz table is only as good as its counts.
 */
import { describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import { inputAt, invariant, runCampaign, type Campaign } from "./runner.js";

/** Input n behaves by n mod 5: ok, typed error, crash, violation, hang (async, never settles). */
const sorter: Campaign<number> = {
  name: "sorter",
  generate: (rng) => rng.int(1_000_000),
  run(n) {
    switch (n % 5) {
      case 0:
        return "ok";
      case 1:
        throw new AgyBridgeError("invalid_argument", "refused");
      case 2:
        throw new TypeError("boom");
      case 3:
        invariant(false, () => `broke on ${n}`);
        return "ok";
      default:
        return new Promise<"ok">(() => undefined);
    }
  },
  *shrink(n) {
    // Roughly half of n, with the same behaviour; a wrong candidate first, which the runner must skip.
    if (n >= 5) {
      yield n - 1;
      yield Math.floor(n / 10) * 5 + (n % 5);
    }
  },
};

describe("runCampaign", () => {
  it("counts every outcome kind and keeps replayable failures", async () => {
    const count = 40;
    const result = await runCampaign(sorter, { seed: 7, count, hangMs: 20, keepFailures: 100, shrink: false });
    const inputs = Array.from({ length: count }, (_, i) => inputAt(sorter, 7, i));
    const expected = (k: number) => inputs.filter((n) => n % 5 === k).length;
    expect(result).toMatchObject({
      inputs: count,
      typedErrors: expected(1),
      crashes: expected(2),
      violations: expected(3),
      hangs: expected(4),
    });
    for (const failure of result.failures) {
      const input = inputAt(sorter, 7, failure.index);
      expect(failure.input).toBe(JSON.stringify(input));
      expect(failure.outcome).toBe(({ 2: "crash", 3: "violation", 4: "hang" } as const)[(input % 5) as 2 | 3 | 4]);
    }
  });

  it("shrinks the first failure of a kind to a smaller input failing the same way", async () => {
    const result = await runCampaign(sorter, { seed: 7, count: 40, hangMs: 20 });
    const violation = result.failures.find((f) => f.outcome === "violation");
    expect(violation?.input).toBe("3");
    expect(violation?.message).toBe("broke on 3");
  });

  it("builds the same input from the same seed and index, and others from other seeds", () => {
    expect(inputAt(sorter, 11, 3)).toBe(inputAt(sorter, 11, 3));
    const a = Array.from({ length: 20 }, (_, i) => inputAt(sorter, 11, i));
    const b = Array.from({ length: 20 }, (_, i) => inputAt(sorter, 12, i));
    expect(a).not.toEqual(b);
  });
});
