/**
 * `agy-bridge/sim`: a simulated agy (language server + conversation engine +
 * scenarios) that behaves like agy on the wire, for testing code that
 * supervises agy without an agy account.
 */
export { startSimServer, type SimServer, type SimServerOptions } from "./server/server.js";
export { createSimEngine, type SimEngine, type SimEngineOptions } from "./engine/engine.js";
export { AGY_VERSIONS, DEFAULT_AGY_VERSION, agyPersona, isAgyVersion, type AgyPersona, type AgyVersion } from "./engine/persona.js";
export { loadScenarios, parseScenario, matchScenario, DEFAULT_SCENARIO_DIR } from "./engine/scenarios.js";
export type { Scenario, ScenarioFile, ScenarioMatch, ScriptStep } from "./engine/scenario-schema.js";
export type { SimFaults } from "./server/faults.js";
export { systemClock, type SimClock, type SimTimer } from "./engine/sim-clock.js";
export type { ConversationListener, SimConversation, SubagentLineage } from "./engine/conversation.js";
export type { SimTuiPort, TuiView, TuiPending, TuiAnswer, TuiQuestion, TuiTranscriptEntry, TuiPermissionAction } from "./tui/tui-port.js";
export {
  TUI_DIGITS,
  TUI_STALE_DIALOGS,
  TUI_VERSIONS,
  isTui12,
  resolveTuiVersion,
  type TuiCommandOptions,
  type TuiDigits,
  type TuiMode,
  type TuiStaleDialog,
  type TuiVersion,
} from "./tui/tui-options.js";
export { AGY_TRANSCRIPT_NAMES, writeAgyFiles, transcriptRecord, type AgyFiles, type AgyFilesOptions, type AgyTranscriptName } from "./engine/agy-files.js";
export { createSelfSignedCertificate, type SelfSignedCertificate } from "./server/certificate.js";
export { createFakeTui, type FakeTui, type FakeTuiOptions } from "./tui/fake-tui.js";
export { buildAgyLauncher, AGY_LAUNCHER_SOURCE, type BuildAgyLauncherOptions } from "./launcher/build-agy-launcher.js";
