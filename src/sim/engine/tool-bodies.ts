/**
 * The typed bodies of finished read-only tool steps (LIST_DIRECTORY,
 * VIEW_FILE, GENERIC) as agy 1.0.10 writes them: zero values omitted, int64
 * sizes as strings, paths as `file://` URIs (spike-notes §4.3).
 */
import type { CreateFileScriptStep, EditFileScriptStep, GenericScriptStep, ListDirectoryScriptStep, ViewFileScriptStep } from "./scenario-schema.js";
import type { JsonObject, ToolCallSpec } from "./step-factory.js";

/** A `file://` URI for a path, as agy reports paths in step bodies. */
export function fileUri(path: string): string {
  return path.startsWith("file://") ? path : `file://${path.startsWith("/") ? "" : "/"}${path}`;
}

export function listDirectoryCall(script: ListDirectoryScriptStep): ToolCallSpec {
  return { name: "list_dir", args: { DirectoryPath: script.path }, toolAction: `Listing ${script.path}`, toolSummary: "List directory" };
}

export function listDirectoryBody(script: ListDirectoryScriptStep): JsonObject {
  return {
    listDirectory: {
      directoryPathUri: fileUri(script.path),
      results: script.entries.map((e) => ({
        name: e.name,
        ...(e.isDir === true ? { isDir: true } : {}),
        ...(e.sizeBytes !== undefined && e.sizeBytes > 0 ? { sizeBytes: String(e.sizeBytes) } : {}),
      })),
    },
  };
}

export function viewFileCall(script: ViewFileScriptStep): ToolCallSpec {
  return { name: "view_file", args: { AbsolutePath: script.path }, toolAction: `Reading ${script.path}`, toolSummary: "View file" };
}

export function viewFileBody(script: ViewFileScriptStep): JsonObject {
  return {
    viewFile: {
      absolutePathUri: fileUri(script.path),
      ...(script.numLines > 1 ? { endLine: script.numLines - 1 } : {}),
      ...(script.numBytes > 0 ? { lineRangeBytes: script.numBytes } : {}),
      ...(script.numLines > 0 ? { numLines: script.numLines } : {}),
      ...(script.numBytes > 0 ? { numBytes: script.numBytes } : {}),
    },
  };
}

/** `replace_file_content`: the file, the lines it replaces and their replacement (argument names as agy's tools use them). */
export function editFileCall(script: EditFileScriptStep): ToolCallSpec {
  return {
    name: "replace_file_content",
    args: { TargetFile: script.path, TargetContent: script.removed.join("\n"), ReplacementContent: script.added.join("\n") },
    toolAction: `Editing ${script.path}`,
    toolSummary: "Edit file",
  };
}

/** `write_to_file`: the new file and its content. */
export function createFileCall(script: CreateFileScriptStep): ToolCallSpec {
  return {
    name: "write_to_file",
    args: { TargetFile: script.path, CodeContent: script.lines.join("\n") },
    toolAction: `Creating ${script.path}`,
    toolSummary: "Create file",
  };
}

export function genericCall(script: GenericScriptStep): ToolCallSpec {
  return { name: script.toolName, args: script.args as JsonObject, toolAction: `Running ${script.toolName}`, toolSummary: script.toolName };
}

/** `generic {args, result}`; the render info (with agy's `aggregationKey`) only when the script gives some. */
export function genericBody(script: GenericScriptStep): JsonObject {
  const render: JsonObject = {};
  if (script.title !== undefined) render.title = script.title;
  if (script.titlePrefix !== undefined) render.titlePrefix = script.titlePrefix;
  if (script.markdown !== undefined) render.markdown = script.markdown;
  if (script.icon !== undefined) render.icon = script.icon;
  const info = Object.keys(render).length > 0 ? { stepRenderInfo: { ...render, aggregationKey: script.toolName } } : {};
  return { generic: { args: script.args, result: { result: script.result, ...info } } };
}
