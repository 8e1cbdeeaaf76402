/** Test helpers: read step fixtures (ours) and real agy 1.0.10 captures (fixtures/captures). */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const FIXTURES = join(root, "fixtures", "steps");
export const CAPTURES = join(root, "fixtures", "captures", "agy-1.0.10");

/** Our fixture conversation and trajectory. */
export const CID = "7c1f3a52-0d4e-4b8a-9e61-2f5b8c3d9a10";
export const TID = "d24e8b90-5a17-4c3e-8f02-6b9e1a7c4f35";

export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as Record<string, unknown>;
}

/** The `update` objects of an NDJSON frames fixture. */
export function frames(name: string): Record<string, unknown>[] {
  return readFileSync(join(FIXTURES, name), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { update: Record<string, unknown> }).update);
}

export function capture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(CAPTURES, name), "utf8")) as Record<string, unknown>;
}

export function captureNames(): string[] {
  return readdirSync(CAPTURES)
    .filter((f) => f.endsWith(".json"))
    .sort();
}

export function fixtureNames(ext = ".json"): string[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith(ext))
    .sort();
}

export const clone = <T>(value: T): T => structuredClone(value);
