import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import { parseJsonBody } from "../../src/rpc/response-decoding.js";

/** What the body means read the plain way: its UTF-8 text, parsed; or the error that gives. */
function asUtf8Text(bytes: Uint8Array): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(Buffer.from(bytes).toString("utf8")) as unknown };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function parsed(bytes: Uint8Array): { value: unknown } | { error: string } {
  try {
    return { value: parseJsonBody(bytes, "M") };
  } catch (error) {
    expect(error).toBeInstanceOf(RpcError);
    return { error: ((error as RpcError).cause as Error).message };
  }
}

const encode = (text: string) => Buffer.from(text, "utf8");

// A long ASCII body with a few non-ASCII characters: the shape agy answers have.
const sparse = (inner: string) => encode(`{"steps":[{"text":"${"a".repeat(50_000)}${inner}${"b".repeat(50_000)}","k${inner}":1}]}`);

describe("JSON bodies with non-ASCII text", () => {
  it("parse to the same values as their UTF-8 text, in strings and keys", () => {
    for (const inner of ["😀", "é", "日本語", "\u2028", "\uFEFF", "📁 folder", "x\u00a0y", "\\\\é", "\\n😀"]) {
      const body = sparse(inner);
      const result = parsed(body);
      expect(result).toEqual(asUtf8Text(body));
      expect("value" in result).toBe(true);
    }
  });

  it("reject a backslash before a non-ASCII character, as their UTF-8 text does", () => {
    const body = sparse("\\é");
    expect("error" in asUtf8Text(body)).toBe(true);
    expect(parsed(body)).toEqual(asUtf8Text(body));
  });

  it("read invalid UTF-8 with replacement characters, as the UTF-8 decoder does", () => {
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf0, 0x9f, 0x98]]) {
      const body = Buffer.concat([encode('{"a":"x'), Buffer.from(bad), encode('y"}')]);
      const result = parsed(body);
      expect(result).toEqual(asUtf8Text(body));
      expect(result).toEqual({ value: { a: `x${"\ufffd".repeat(new TextDecoder().decode(Buffer.from(bad)).length)}y` } });
    }
  });

  it("fail with the UTF-8 text's own error when a non-ASCII character stands outside a string", () => {
    const body = encode('{"a":1é}');
    expect("error" in parsed(body)).toBe(true);
    expect(parsed(body)).toEqual(asUtf8Text(body));
  });

  it("parse dense non-ASCII text to the same values", () => {
    const body = encode(JSON.stringify({ text: "日本語のテキスト".repeat(20_000) }));
    expect(parsed(body)).toEqual(asUtf8Text(body));
  });

  it("agree with their UTF-8 text on arbitrary JSON and on damaged bytes", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ stringUnit: "binary" }),
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.array(fc.integer({ min: 0x80, max: 0xff }), { maxLength: 3 }),
        (value, at, junk) => {
          const body = [...encode(`${JSON.stringify(value)}`)];
          junk.forEach((byte, i) => body.splice((at[i] ?? 0) % (body.length + 1), 0, byte));
          const bytes = Uint8Array.from(body);
          expect(parsed(bytes)).toEqual(asUtf8Text(bytes));
        },
      ),
      { numRuns: 500 },
    );
  });
});
