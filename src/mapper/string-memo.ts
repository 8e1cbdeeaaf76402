/**
 * A memo of a function of short strings that repeat from step to step (wire
 * enum names, argument names). Every step of a snapshot brings its own copies
 * of these strings, and a `Map` lookup hashes each copy anew — about a tenth
 * of a snapshot's mapping time, measured. A 64-slot table indexed by a
 * string's length and two of its characters finds the remembered copy with
 * one comparison instead; the `Map` is asked only on a miss.
 */
export class StringMemo {
  readonly #values: (string | undefined)[] = new Array<string | undefined>(64).fill(undefined);
  readonly #results: string[] = new Array<string>(64).fill("");
  readonly #map = new Map<string, string>();

  constructor(
    readonly compute: (value: string) => string,
    /** Distinct values kept; past it a value is computed each time (a flood of invented names is not kept). */
    readonly limit: number,
  ) {}

  of(value: string): string {
    const length = value.length;
    const slot = length === 0 ? 0 : (length * 7 + value.charCodeAt(length - 1) * 3 + value.charCodeAt(length >> 1)) & 63;
    if (this.#values[slot] === value) return this.#results[slot] as string;
    let result = this.#map.get(value);
    if (result === undefined) {
      result = this.compute(value);
      if (this.#map.size >= this.limit) return result;
      this.#map.set(value, result);
    }
    this.#values[slot] = value;
    this.#results[slot] = result;
    return result;
  }
}
