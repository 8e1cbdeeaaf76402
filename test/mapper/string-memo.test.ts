/**
 * The memo behind wire enum suffixes and argument names: a value always gets
 * its own result, whatever shares its slot, and past the bound values are
 * still computed right.
 */
import { describe, expect, it } from "vitest";
import { StringMemo } from "../../src/mapper/string-memo.js";

describe("StringMemo", () => {
  it("returns each value's own result, computing a value once while under the bound", () => {
    let calls = 0;
    const memo = new StringMemo((v) => {
      calls++;
      return `<${v}>`;
    }, 10_000);
    // 2,000 values of one length share 64 slots: many collide and evict each other.
    const values = Array.from({ length: 2000 }, (_, i) => `VALUE_${String(i).padStart(5, "0")}`);
    for (let round = 0; round < 3; round++) {
      for (const v of values) expect(memo.of(v)).toBe(`<${v}>`);
    }
    expect(calls).toBe(2000);
    // Copies with equal text (as every parsed step brings) hit the remembered result.
    expect(memo.of(["VALUE", "00007"].join("_"))).toBe("<VALUE_00007>");
    expect(memo.of("")).toBe("<>");
    expect(calls).toBe(2001);
  });

  it("keeps computing right past its bound", () => {
    const memo = new StringMemo((v) => v.toLowerCase(), 4);
    for (let i = 0; i < 500; i++) expect(memo.of(`Name${i}`)).toBe(`name${i}`);
    expect(memo.of("Name0")).toBe("name0");
  });
});
