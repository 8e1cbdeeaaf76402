/**
 * Display names for model enums from `GetAvailableModels` (spike-notes §3.10):
 * `models[*].model == enum` gives `displayName`; no match keeps the enum.
 */
import { asObject, asString } from "../protocol/json.js";
import type { ModelCatalog } from "../protocol/wire-schemas.js";
// Its own file, not the mapper barrel (which builds every event schema with zod at import).
import type { MapperEvent } from "../mapper/events.js";

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

/** `events` with the display name on each `model_changed` whose model agy's catalog names (in place: the array is the caller's). */
export function withDisplayNames(catalog: ModelCatalog | undefined, events: MapperEvent[]): MapperEvent[] {
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.type !== "model_changed") continue;
    const displayName = displayNameFor(catalog, event.model);
    if (displayName !== undefined) events[i] = { ...event, displayName };
  }
  return events;
}
