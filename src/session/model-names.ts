/**
 * Display names for model enums from `GetAvailableModels` (spike-notes §3.10):
 * `models[*].model == enum` gives `displayName`; no match keeps the enum.
 */
import { asObject, asString } from "../protocol/json.js";
import type { ModelCatalog } from "../protocol/wire-schemas.js";

/** The display name agy offers for `model`, or undefined. */
export function displayNameFor(catalog: ModelCatalog | undefined, model: string): string | undefined {
  const models = asObject(catalog?.models);
  if (models === undefined) return undefined;
  for (const entry of Object.values(models)) {
    const e = asObject(entry);
    if (e !== undefined && asString(e["model"]) === model) {
      const name = asString(e["displayName"]);
      return name === undefined || name === "" ? undefined : name;
    }
  }
  return undefined;
}
