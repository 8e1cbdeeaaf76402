/**
 * agy-bridge public API. No side effects on import. The simulator is
 * exported separately, as `agy-bridge/sim`.
 */
export * from "./errors.js";
export * from "./rpc/index.js";
export * from "./mapper/index.js";
