/**
 * A tool call that cannot do what was asked: bad input the schema cannot
 * catch, an unknown conversation, a refused answer. The MCP server turns it
 * into a tool error result (`isError: true`) whose text is this sentence, so
 * the calling agent reads why and what to do instead.
 */
import { AgyBridgeError } from "../errors.js";

export class McpToolError extends AgyBridgeError {
  override name = "McpToolError";
  constructor(message: string) {
    super("invalid_argument", message);
  }
}

/** The sentence for any failure inside a tool: our errors say what to do; anything else is named as a failure of agy-bridge. */
export function toolErrorText(error: unknown): string {
  if (error instanceof AgyBridgeError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return `agy-bridge failed while running the tool (${message}); try again, and report it if it repeats.`;
}
