/**
 * Discovery: find agy's language servers on this machine — processes,
 * listeners, transport, CSRF token, conversations — and choose one for a
 * caller. See docs/discovery.md.
 */
export { discoverServers, type DiscoverOptions, type DiscoveryResult } from "./discover.js";
export { createDiscoveryWatch, type DiscoveryWatch, type DiscoveryWatchOptions } from "./discovery-watch.js";
export { findServer } from "./find-server.js";
export {
  createDiscoveryCache,
  discoveryCacheDir,
  type CachedProbe,
  type DiscoveryCache,
  type DiscoveryCacheOptions,
  type ProcessIdentity,
} from "./discovery-cache.js";
export {
  asAgyVersion,
  compareAgyVersions,
  isNewerThanProbed,
  NEWEST_PROBED_AGY,
  versionFromBanner,
  type AgyVersionInfo,
  type AgyVersionSource,
} from "./agy-version.js";
export { lookUpAgyVersion, paneBannerVersion, type VersionLookup, type VersionLookupOptions, type VersionQuery } from "./version-lookup.js";
export { DiscoveryError, type DiscoveryCandidate, type DiscoveryFailure } from "./discovery-error.js";
export { HINTS, type DiscoveryStep, type StepStatus } from "./report.js";
export { createWorkspaceReader, type WorkspaceReader } from "./process-workspace.js";
export { createProcSource, type ProcSource, type ProcRead } from "./proc-source.js";
export { spawnCommand, type RunCommand, type RunResult } from "./run-command.js";
export { findAgyPane, type FindPaneOptions, type TmuxServerRef } from "./pane-lookup.js";
export {
  createTmuxScope,
  inTmuxScope,
  outOfScopeMessage,
  tmuxServerLabel,
  type TmuxScope,
  type TmuxScopeOptions,
} from "./tmux-scope.js";
export type {
  DiscoveredConversation,
  DiscoveredListener,
  DiscoveredServer,
  ListenerSource,
  ListenerTransport,
  ListenerTrust,
  PaneRef,
  ServerBinding,
  ServerQuery,
} from "./types.js";
