/**
 * Consistent placeholders: the same input always gets the same placeholder
 * within one capture, so structure stays testable (a step's trajectory id
 * equals its frame's; a path seen twice is one path). Each placeholder has
 * the length of what it replaces, so screens keep their layout.
 */
import { fitTo, letters } from "./text-mask.js";

/** A UUID, as agy's conversation, trajectory, execution and message ids are. */
export const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;

export interface Placeholders {
  /** A UUID → `00000000-0000-4000-8000-0000000000NN` (hex counter). */
  uuid(value: string): string;
  /** Any other id (a tool call id, a response id) → `id<N>` padded to its length. */
  id(value: string): string;
  /** A path segment → letters padded to its length, the extension kept (`notes.md` → `baaaa.md` for the first one seen). */
  segment(value: string): string;
  /** A user name → `u` and letters, padded with `u` to its length (`alice` → `ubuuu`). */
  user(value: string): string;
  /** A host name → same-length letters, dots kept (`build.corp.example` → `hbaaa.haaa.haaaaaa`). */
  host(value: string): string;
}

export function createPlaceholders(): Placeholders {
  const maps = {
    uuid: new Map<string, string>(),
    id: new Map<string, string>(),
    segment: new Map<string, string>(),
    user: new Map<string, string>(),
    host: new Map<string, string>(),
  };
  const once = (map: Map<string, string>, value: string, make: (n: number) => string): string => {
    const known = map.get(value);
    if (known !== undefined) return known;
    const made = make(map.size + 1);
    map.set(value, made);
    return made;
  };
  return {
    uuid: (value) => once(maps.uuid, value.toLowerCase(), (n) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`),
    id: (value) => once(maps.id, value, (n) => fitTo(`id${n}`, Math.max(value.length, `id${n}`.length))),
    segment: (value) =>
      once(maps.segment, value, (n) => {
        const dot = value.lastIndexOf(".");
        const ext = dot > 0 && value.length - dot <= 6 ? value.slice(dot) : "";
        const baseLength = value.length - ext.length;
        return fitTo(letters(n), baseLength, "a") + ext;
      }),
    user: (value) => once(maps.user, value, (n) => fitTo(`u${letters(n)}`, value.length, "u")),
    host: (value) =>
      once(maps.host, value.toLowerCase(), (n) =>
        value
          .split(".")
          .map((label, i) => fitTo(i === 0 ? `h${letters(n)}` : "h", label.length, "a"))
          .join("."),
      ),
  };
}
