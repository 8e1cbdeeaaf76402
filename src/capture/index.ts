/**
 * Capture: record a live agy conversation as a redacted fixture directory
 * (docs/capture.md), and check agy-bridge's recorded facts against a live agy
 * (`doctor --report`). Redaction (`redaction/`) is pure and tested on its own.
 */
export { recordCapture, type CaptureClient, type CaptureClock, type CaptureResult, type RecordOptions } from "./recorder.js";
export { createCaptureSink, type CaptureSink } from "./capture-sink.js";
export { resolveCaptureTarget, type CaptureTarget } from "./capture-target.js";
export { isCaptureDir, readCaptureDir, type CaptureTimeline, type TimelineItem } from "./capture-reader.js";
export { createRedactor, type Redactor, type RedactorOptions } from "./redaction/redactor.js";
export type { CaptureListener, CaptureMeta, ListenerRole } from "./capture-format.js";
