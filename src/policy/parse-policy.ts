/**
 * Reads a policy file's text (YAML, or JSON, which YAML reads too) into a
 * validated {@link Policy}. Every problem is a {@link PolicyError} that names
 * the file, line and column and says what to write instead. Pure: the caller
 * reads the file.
 */
import { isNode, LineCounter, parseDocument, type Document } from "yaml";
import type { z } from "zod";
import { AgyBridgeError } from "../errors.js";
import { PolicySchema, type Policy } from "./policy-schema.js";

/** A policy (or cases) file that cannot be used, with where the problem is. */
export class PolicyError extends AgyBridgeError {
  override name = "PolicyError";
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The problem alone, without the position. */
  readonly problem: string;

  constructor(file: string, line: number, column: number, problem: string) {
    super("invalid_argument", `${file}:${line}:${column}: ${problem}`);
    this.file = file;
    this.line = line;
    this.column = column;
    this.problem = problem;
  }
}

export function parsePolicy(text: string, file: string): Policy {
  return parseYamlWith(PolicySchema, text, file);
}

/** Parses YAML text and validates it with `schema`, reporting the first problem at its position. */
export function parseYamlWith<T extends z.ZodType>(schema: T, text: string, file: string): z.output<T> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const yamlError = doc.errors[0];
  if (yamlError !== undefined) {
    const pos = yamlError.linePos?.[0] ?? { line: 1, col: 1 };
    throw new PolicyError(file, pos.line, pos.col, `${firstLine(yamlError.message)}; fix the YAML syntax there`);
  }
  const result = schema.safeParse(doc.toJS() ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw new PolicyError(file, 1, 1, "the file is not valid");
  const { offset, path } = locate(doc, issue.path);
  const pos = lines.linePos(offset);
  const where = path.length === 0 ? "" : `${describePath(path)}: `;
  throw new PolicyError(file, pos.line, pos.col, `${where}${issue.message}`);
}

/** The offset of the deepest node on `path` that exists (a missing key points at its parent). */
function locate(doc: Document, path: readonly PropertyKey[]): { offset: number; path: PropertyKey[] } {
  const keys = path.filter((key): key is string | number => typeof key === "string" || typeof key === "number");
  for (let depth = keys.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(keys.slice(0, depth), true);
    if (isNode(node) && node.range !== undefined && node.range !== null) {
      return { offset: node.range[0], path: keys };
    }
  }
  return { offset: 0, path: keys };
}

function describePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
}
