/**
 * Mutators shared by the campaigns: byte-level damage (bit flips, inserted
 * and deleted bytes, truncation), random chunking of a byte stream, and
 * JSON-level damage (a field of the wrong type, an edge-case number, a deep
 * nest, a `__proto__` key, a missing field).
 */
import { STEP_STATUS, STEP_TYPE } from "../../src/protocol/wire-names.js";
import type { Rng } from "./rng.js";

/** Bytes that mean something to a Connect envelope or a JSON parser. */
const SPECIAL_BYTES = [0x00, 0x01, 0x02, 0x03, 0x7f, 0x80, 0xff, 0x7b, 0x7d, 0x22, 0x5b, 0x5d, 0x3a, 0x2c, 0x5c];

/** One to three byte-level mutations of a copy of `bytes`. */
export function mutateBytes(rng: Rng, bytes: Uint8Array): Uint8Array {
  let out: Uint8Array = bytes.slice();
  const rounds = rng.between(1, 3);
  for (let r = 0; r < rounds; r++) {
    const at = rng.int(out.length + 1);
    switch (rng.int(7)) {
      case 0: {
        // Flip one bit.
        if (out.length === 0) break;
        const i = rng.int(out.length);
        out[i] = (out[i] ?? 0) ^ (1 << rng.int(8));
        break;
      }
      case 1: {
        // Insert a few bytes, random or meaningful.
        const insert = rng.chance(0.5) ? rng.bytes(rng.between(1, 8)) : Uint8Array.of(rng.pick(SPECIAL_BYTES));
        out = concat(out.subarray(0, at), insert, out.subarray(at));
        break;
      }
      case 2: {
        // Delete a short range.
        out = concat(out.subarray(0, at), out.subarray(Math.min(out.length, at + rng.between(1, 16))));
        break;
      }
      case 3:
        // Truncate.
        out = out.slice(0, at);
        break;
      case 4: {
        // Duplicate a range.
        const end = Math.min(out.length, at + rng.between(1, 32));
        out = concat(out.subarray(0, end), out.subarray(at, end), out.subarray(end));
        break;
      }
      case 5: {
        // Overwrite one byte with a meaningful one.
        if (out.length === 0) break;
        out[rng.int(out.length)] = rng.pick(SPECIAL_BYTES);
        break;
      }
      default: {
        // Overwrite a run with random bytes.
        const n = Math.min(out.length - Math.min(at, out.length), rng.between(1, 8));
        out.set(rng.bytes(n), Math.min(at, out.length));
      }
    }
  }
  return out;
}

/** Splits `bytes` into chunks the way a slow, bursty or hostile server might. */
export function chunk(rng: Rng, bytes: Uint8Array): Uint8Array[] {
  const style = rng.int(5);
  if (style === 0 || bytes.length === 0) return [bytes];
  const sizes =
    style === 1
      ? () => 1
      : style === 2
        ? () => rng.between(1, 16)
        : style === 3
          ? () => rng.between(1, 4096)
          : () => (rng.chance(0.2) ? 0 : rng.between(1, 300));
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = sizes();
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A JSON object nested `depth` levels under `key` (built without recursion). */
export function nested(depth: number, key = "a"): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { [key]: value };
  return value;
}

const WIRE_STATUSES = Object.values(STEP_STATUS);
const WIRE_TYPES = Object.values(STEP_TYPE);

/** Values that have broken parsers before: wrong types, edge-case numbers, deep nests, odd keys. */
export function oddValue(rng: Rng): unknown {
  switch (rng.int(22)) {
    case 0:
      return -1;
    case 1:
      return 1.5;
    case 2:
      return 1e21;
    case 3:
      return 1e308;
    case 4:
      return 2 ** 53;
    case 5:
      return rng.pick(["-5", "12345678901234567890", "999999999999999", "9007199254740993", "0x10", "1e3", " 7", ""]);
    case 6:
      return null;
    case 7:
      return rng.chance(0.5);
    case 8:
      return [];
    case 9:
      return {};
    case 10:
      return nested(rng.pick([50, 1000, 5000]));
    case 11:
      return JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}') as unknown;
    case 12:
      return rng.pick(WIRE_STATUSES);
    case 13:
      return rng.pick(WIRE_TYPES);
    case 14:
      return "x".repeat(rng.pick([1000, 70_000]));
    case 15:
      return String.fromCharCode(...Array.from({ length: rng.between(1, 12) }, () => rng.int(0x3000)));
    case 16:
      return "\u001b[201~\u0007\r\n\ud800";
    case 17:
      return rng.int(1000);
    case 18:
      return String(rng.int(1000));
    case 19:
      return [rng.int(5), "3", null, -2];
    case 20:
      return Array.from({ length: rng.between(1, 4) }, () => ({ stepIndex: rng.int(4) }));
    default:
      return -0;
  }
}

/** A copy of `value` with one to three JSON-level mutations at random places. */
export function mutateJson(rng: Rng, value: unknown): unknown {
  let root: unknown;
  try {
    root = structuredClone(value);
  } catch {
    // Nested deeper than the clone can follow (an earlier mutation): leave it as it is.
    return value;
  }
  const rounds = rng.between(1, 3);
  for (let r = 0; r < rounds; r++) root = mutateOnce(rng, root);
  return root;
}

function mutateOnce(rng: Rng, root: unknown): unknown {
  // Walk down a random path, stopping now and then (and at leaves).
  let parent: Record<string, unknown> | unknown[] | undefined;
  let key: string | number | undefined;
  let node = root;
  for (let depth = 0; depth < 12; depth++) {
    const keys = childKeys(node);
    if (keys.length === 0 || rng.chance(0.25)) break;
    parent = node as Record<string, unknown> | unknown[];
    key = rng.pick(keys);
    node = (parent as Record<string | number, unknown>)[key];
  }
  const replacement = replace(rng, node);
  if (parent === undefined || key === undefined) return replacement === DELETE ? {} : replacement;
  if (replacement === DELETE) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key as string];
  } else if (Array.isArray(parent) && rng.chance(0.2)) {
    parent.splice(key as number, 0, replacement);
  } else {
    (parent as Record<string | number, unknown>)[key] = replacement;
  }
  return root;
}

const DELETE = Symbol("delete");

function replace(rng: Rng, node: unknown): unknown {
  switch (rng.int(5)) {
    case 0:
      return DELETE;
    case 1:
      return Array.isArray(node) && node.length > 0 ? [...node, rng.pick(node)] : oddValue(rng);
    case 2:
      return rng.chance(0.5) ? [node] : { value: node };
    default:
      return oddValue(rng);
  }
}

function childKeys(node: unknown): Array<string | number> {
  if (Array.isArray(node)) return node.map((_, i) => i);
  if (typeof node === "object" && node !== null) return Object.keys(node);
  return [];
}
