/**
 * Fault knobs of the simulated language server, for testing a client's
 * recovery paths. Settable at start and at runtime (`SimServer.setFaults`).
 */
export interface SimFaults {
  /** Abort each stream connection (no end-stream frame) after this many data frames. */
  dropStreamAfterFrames?: number;
  /** After this many data frames, send nothing more but keep the connection open. */
  stallStreamAfterFrames?: number;
  /** After this many data frames, write half of the next frame, then abort the connection. */
  closeMidFrameAfterFrames?: number;
  /** Delay every unary answer by this many ms. */
  unaryDelayMs?: number;
  /**
   * Refuse every HandleCascadeUserInteraction with a Connect `unavailable`
   * error carrying this message (nothing is delivered, the step keeps waiting).
   */
  refuseInteractions?: string;
}
