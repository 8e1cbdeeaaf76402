/**
 * The Agent Client Protocol front door: editors join the attended agy
 * session a person is already running (docs/acp.md).
 */
export { serveAcp, promptText, clientName } from "./acp-agent.js";
export type { AcpAgentConnection, AcpAgentOptions } from "./acp-agent.js";
export { createPolicyGate } from "./policy-gate.js";
export type { PolicyGate, PolicyVerdict } from "./policy-gate.js";
export { chooseConversation, namedConversation } from "./session-choice.js";
export type { AcpCandidate, AcpSessionSource } from "./session-source.js";
export type { UsageTotals } from "./acp-session.js";
