import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The pinned event logs: one NDJSON line per run (see pinned-runs.ts). */
export const PINNED_FILE = join(dirname(fileURLToPath(import.meta.url)), "..", "pinned-events.ndjson");
