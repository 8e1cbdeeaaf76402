/**
 * The agy version the simulator plays: one table of everything the facts
 * record as version-dependent, so each persona sends only what its version
 * is recorded to send (spike-notes §3.4, §10.4, §10.5, §11.5, §11.6;
 * provenance per row in docs/simulator.md, "Personas").
 */
import { AgyBridgeError } from "../../errors.js";

export const AGY_VERSIONS = ["1.0.10", "1.1", "1.2"] as const;

/** A persona: `1.0.10` (every capture), `1.1` or `1.2` (newer builds' clients). */
export type AgyVersion = (typeof AGY_VERSIONS)[number];

export const DEFAULT_AGY_VERSION: AgyVersion = "1.0.10";

export interface AgyPersona {
  readonly version: AgyVersion;
  /**
   * Stream frames carry `update.fullyIdle` and `mainTrajectoryUpdate.{status,
   * fullyIdle}`: reported only by a client of agy 1.2.x, absent from the
   * older schema (spike-notes §11.5). A strict 1.0.10 client broke on them.
   */
  readonly streamIdleFields: boolean;
  /** `GetConversationMetadata` adds `workspaces` and `workspaceUris` (clients 1.1–1.2, spike-notes §10.4). */
  readonly metadataWorkspaces: boolean;
  /** `GetCascadeTrajectory` exists (clients 1.1–1.2, spike-notes §10.4); older personas answer 404 like any unknown method. */
  readonly cascadeTrajectoryMethod: boolean;
  /**
   * The stream request's `initialStepsPageBounds` is honoured (clients 1.1–1.2;
   * not in the older schema, spike-notes §11.6). Older personas drop it as an
   * unknown field (spike-notes §1.2) and replay every step.
   */
  readonly initialPageBounds: boolean;
}

const PERSONAS: Record<AgyVersion, AgyPersona> = {
  "1.0.10": { version: "1.0.10", streamIdleFields: false, metadataWorkspaces: false, cascadeTrajectoryMethod: false, initialPageBounds: false },
  "1.1": { version: "1.1", streamIdleFields: false, metadataWorkspaces: true, cascadeTrajectoryMethod: true, initialPageBounds: true },
  "1.2": { version: "1.2", streamIdleFields: true, metadataWorkspaces: true, cascadeTrajectoryMethod: true, initialPageBounds: true },
};

export function isAgyVersion(value: unknown): value is AgyVersion {
  return typeof value === "string" && (AGY_VERSIONS as readonly string[]).includes(value);
}

/** The persona of `version` (default 1.0.10); an unknown version is an `invalid_argument` naming the choices. */
export function agyPersona(version: unknown = DEFAULT_AGY_VERSION): AgyPersona {
  if (!isAgyVersion(version)) {
    throw new AgyBridgeError("invalid_argument", `agy version ${JSON.stringify(version)} has no simulator persona; use one of ${AGY_VERSIONS.join(", ")}.`);
  }
  return PERSONAS[version];
}
