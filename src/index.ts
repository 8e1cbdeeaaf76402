/**
 * agy-bridge public API. No side effects on import.
 */
export * from "./errors.js";
export * from "./rpc/methods.js";
export * from "./rpc/wire-schemas.js";
export * from "./rpc/envelope.js";
