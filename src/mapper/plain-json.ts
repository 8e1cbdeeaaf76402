/**
 * Copies of raw values that are safe to put inside an event: plain JSON only
 * (null, booleans, finite numbers, strings, arrays, plain objects), with
 * bounded depth and size, so `JSON.stringify(event)` can never throw — not on
 * a cycle, a BigInt, or an echo nested thousands deep — whatever stack the
 * consumer serialises it on.
 */
import type { JsonObject } from "../protocol/json.js";

/** Deeper values are refused: agy's own interaction blocks are a few levels deep. */
export const MAX_JSON_DEPTH = 64;
/** More values (array items, object entries) than this are refused. */
export const MAX_JSON_VALUES = 20_000;

/** A plain-JSON copy, or the reason there is none. */
export type PlainCopy<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Sets `key` as an ordinary own property, even `__proto__` (a plain
 * assignment would replace the object's prototype and lose the key).
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

class Refused extends Error {}

function copyValue(value: unknown, depth: number, budget: { left: number }): unknown {
  if (--budget.left < 0) throw new Refused(`it holds more than ${MAX_JSON_VALUES} values`);
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    throw new Refused("it holds a number JSON cannot represent");
  }
  if (typeof value !== "object") throw new Refused(`it holds a ${typeof value}, which is not JSON`);
  if (depth >= MAX_JSON_DEPTH) throw new Refused(`it is nested more than ${MAX_JSON_DEPTH} levels deep`);
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyValue(value[i], depth + 1, budget);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Refused("it holds an object that is not plain JSON");
  const out: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(out, key, copyValue((value as JsonObject)[key], depth + 1, budget));
  return out;
}

/** A plain-JSON copy of an object (a cycle is refused as too deep). Never throws. */
export function plainObjectCopy(value: JsonObject): PlainCopy<JsonObject> {
  try {
    return { ok: true, value: copyValue(value, 0, { left: MAX_JSON_VALUES }) as JsonObject };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, problem: error.message };
    // A getter or proxy that throws: still never the caller's problem.
    return { ok: false, problem: "reading it failed" };
  }
}

/** Compact JSON text, or undefined when the value cannot be serialised (cycles, BigInt, too deep for the stack). */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
