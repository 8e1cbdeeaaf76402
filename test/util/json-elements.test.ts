/**
 * `jsonElements` finds where each object of a snapshot or array lies in the
 * bytes, reading only brackets and strings. For any valid text each range
 * must parse to exactly the element `JSON.parse` of the whole gives (checked
 * on random documents with strings full of quotes, backslashes, brackets and
 * non-ASCII text, laid out with random whitespace); any other shape must be
 * refused, so `map` parses it whole.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonElements } from "../../src/util/json-elements.js";

const bytes = (text: string): Buffer => Buffer.from(text, "utf8");
const slices = (text: string): string[] | undefined => {
  const buffer = bytes(text);
  const found = jsonElements(buffer);
  if (found === undefined) return undefined;
  const out: string[] = [];
  for (let i = 0; i < found.bounds.length; i += 2) out.push(buffer.toString("utf8", found.bounds[i], found.bounds[i + 1]));
  return out;
};

describe("jsonElements", () => {
  it("finds the objects of a snapshot and of a bare array, across whitespace", () => {
    expect(slices('{"steps":[{"a":1},{"b":[2,{"c":3}]}]}')).toEqual(['{"a":1}', '{"b":[2,{"c":3}]}']);
    expect(jsonElements(bytes('{"steps":[{"a":1}]}'))?.wrapped).toBe(true);
    expect(slices(' \n[ {"a":1} ,\t{"b":2}\r\n] \n')).toEqual(['{"a":1}', '{"b":2}']);
    expect(jsonElements(bytes('[{"a":1}]'))?.wrapped).toBe(false);
    expect(slices('{ "steps" :\n [ {} ] }')).toEqual(["{}"]);
  });

  it("is not misled by brackets, quotes and backslashes inside strings", () => {
    const step = { text: 'a "quoted" } ] { [ \\" \\\\', tail: "\\", key: 'x\\\\"}' };
    const text = JSON.stringify({ steps: [step, { b: "]}" }] });
    const found = slices(text);
    expect(found?.map((s) => JSON.parse(s))).toEqual([step, { b: "]}" }]);
  });

  it.each([
    ["another key", '{"steps":[{"a":1}],"more":1}'],
    ["a key other than steps", '{"step":[{"a":1}]}'],
    ["an escaped key", '{"st\\u0065ps":[{"a":1}]}'],
    ["an element that is not an object", '[{"a":1},7]'],
    ["an empty array", "[]"],
    ["text after the end", '[{"a":1}] x'],
    ["a second document (NDJSON)", '{"steps":[{"a":1}]}\n{"steps":[{"a":1}]}'],
    ["an unterminated string", '[{"a":"1}]'],
    ["an unclosed object", '[{"a":{"b":1}]'],
    ["a missing separator", '[{"a":1}{"b":2}]'],
    ["a byte-order mark", '\ufeff[{"a":1}]'],
    ["nothing", ""],
  ])("refuses %s", (_, text) => {
    expect(jsonElements(bytes(text))).toBeUndefined();
  });

  it("leaves invalid JSON inside an element for JSON.parse of that element to find", () => {
    const found = slices('[{"a":1},{"b":tru},{"c":3}]');
    expect(found).toEqual(['{"a":1}', '{"b":tru}', '{"c":3}']);
    expect(() => JSON.parse(found?.[1] ?? "")).toThrow(SyntaxError);
  });

  it("gives the elements JSON.parse gives, for random documents laid out any way", () => {
    const tricky = fc.string({ unit: fc.constantFrom('"', "\\", "{", "}", "[", "]", ",", ":", " ", "a", "é", "😀", "\n", "\u0000") });
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, tricky, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie("node"), { maxLength: 4 }), tie("object")),
      object: fc.dictionary(tricky, tie("node"), { maxKeys: 4 }),
    }));
    const steps = fc.array(value.object, { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(steps, fc.boolean(), fc.constantFrom(undefined, 1, "\t"), (elements, wrapped, indent) => {
        const text = JSON.stringify(wrapped ? { steps: elements } : elements, null, indent);
        const found = jsonElements(bytes(text));
        expect(found?.wrapped).toBe(wrapped);
        expect(slices(text)?.map((s) => JSON.parse(s))).toEqual(elements);
      }),
      { numRuns: 300 },
    );
  });
});
