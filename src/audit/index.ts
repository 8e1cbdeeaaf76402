/**
 * The audit log of decisions about agy's requests (docs/policy.md). Written
 * by session callers (the CLI, serve); never imported by the mapper or the
 * policy, which stay pure.
 */
export { createAuditLog, defaultAuditPath, readAuditLog } from "./audit-log.js";
export type { AuditEntry, AuditLog, AuditLogOptions, AuditQuery, AuditReading } from "./audit-log.js";
export { AuditDecisionSchema, AuditRecordSchema } from "./audit-record.js";
export type { AuditDecision, AuditRecord } from "./audit-record.js";
export { createSessionAuditor } from "./session-auditor.js";
export type { ManualAnswer, PolicyDecisionReport, SessionAuditor, SessionAuditorOptions } from "./session-auditor.js";
