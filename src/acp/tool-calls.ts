/**
 * How an agy tool call looks to an editor: ACP's tool `kind` (the editor's
 * icon and grouping), a title, and the files it touches (`locations`, so
 * the editor can follow along). Read from agy's tool name and the mapper's
 * arguments; a tool agy-bridge does not know is `other`, titled by name.
 */
import type { ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";

const KINDS: Readonly<Record<string, ToolKind>> = {
  run_command: "execute",
  send_command_input: "execute",
  command_status: "execute",
  view_file: "read",
  view_file_outline: "read",
  view_code_item: "read",
  list_dir: "read",
  write_to_file: "edit",
  replace_file_content: "edit",
  multi_replace_file_content: "edit",
  create_file: "edit",
  edit_file: "edit",
  delete_file: "delete",
  grep_search: "search",
  find_by_name: "search",
  codebase_search: "search",
  search_web: "fetch",
  read_url_content: "fetch",
  ask_question: "other",
};

/** Argument names that carry a path (agy's tools spell them in PascalCase). */
const PATH_KEYS = ["AbsolutePath", "TargetFile", "FilePath", "file_path", "Path", "DirectoryPath", "SearchPath", "path"];

export function toolKind(name: string): ToolKind {
  return KINDS[name] ?? "other";
}

/** The arguments as an object, or undefined when they are not a JSON object (the model's invalid text). */
export function argumentsObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A title an editor can show in one line: the command for a command, agy's own description else. */
export function toolTitle(name: string, args: Record<string, unknown> | undefined, description?: string): string {
  const command = args?.["CommandLine"];
  if (typeof command === "string" && command !== "") return oneLine(command);
  if (description !== undefined && description.trim() !== "") return oneLine(description);
  const path = pathOf(args);
  return path === undefined ? name : `${name} ${path}`;
}

/** The absolute paths the call names, for the editor to follow. */
export function toolLocations(args: Record<string, unknown> | undefined): ToolCallLocation[] {
  const path = pathOf(args);
  return path === undefined ? [] : [{ path }];
}

function pathOf(args: Record<string, unknown> | undefined): string | undefined {
  if (args === undefined) return undefined;
  for (const key of PATH_KEYS) {
    const value = args[key];
    if (typeof value === "string" && value.startsWith("/")) return value;
  }
  return undefined;
}

function oneLine(text: string): string {
  const first = text.trim().split("\n")[0] ?? "";
  return first.length > 120 ? `${first.slice(0, 117)}...` : first;
}
