/**
 * Discovery for a CLI process through the discovery cache
 * (docs/discovery.md, "The discovery cache"): the session's `locate` when no
 * `--url` is given, so a second command against the same agy skips the
 * handshakes and Heartbeats the first one made. The cache directory comes
 * from the environment (`discoveryCacheDir`); without one, plain discovery.
 */
import type { ServerBinding, ServerQuery } from "../discovery/types.js";
import type { CliIo } from "./command.js";

/** A `locate` for `AgySession.attach` that passes the CLI's discovery cache to `findServer`. */
export function cachedLocate(env: CliIo["env"]): (query: ServerQuery) => Promise<ServerBinding> {
  return async (query) => {
    const { createDiscoveryCache, discoveryCacheDir, findServer } = await import("../discovery/index.js");
    const dir = discoveryCacheDir(env);
    return findServer(query, dir === undefined ? {} : { cache: createDiscoveryCache({ dir }) });
  };
}
