/**
 * Splits a command line into the simple commands a shell would run, with a
 * real bash parser (mvdan/sh, the parser behind shfmt, compiled to
 * JavaScript: docs/policy.md says why this one). A rule can then require
 * every simple command to be allowed: `git status; rm -rf ~` is two
 * commands, and `git status $(rm -rf ~)` runs `rm` too.
 *
 * Each simple command is its words after quote removal (`'a b'` → `a b`,
 * `$'\t'` → a tab), without expansion (`$X` stays the text `$X`), joined by
 * single spaces. What a rule must never approve (substitutions, `eval`, an
 * expansion as the command name, a function, an expanding here-document, an
 * output redirection to a file) is listed in `unsafe` with a sentence each.
 */
import sh from "mvdan-sh";
import type { ShNode } from "mvdan-sh";

const { syntax } = sh;
// The parser reports byte offsets into the UTF-8 text.
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const parser = syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash));

export interface SimpleCommand {
  /** The words joined by single spaces, leading `NAME=value` assignments included. */
  text: string;
  /** The command name (the first word after the assignments); undefined for a bare assignment. */
  name: string | undefined;
}

export type CommandAnalysis =
  | { status: "parsed"; commands: SimpleCommand[]; unsafe: string[] }
  | { status: "empty" }
  | { status: "unparseable"; reason: string };

/** Commands that run text as code: a rule cannot see what they will do. */
const CODE_RUNNERS = new Set(["eval", "source", "."]);
/** Redirection operators that write a file (`N>` and `&>` included). */
const WRITING = new Set([">", ">>", ">|", "&>", "&>>", "<>"]);

export function analyseCommandLine(line: string): CommandAnalysis {
  const bytes = encoder.encode(line);
  let file: ShNode;
  try {
    file = parser.Parse(line, "command");
  } catch (error) {
    return { status: "unparseable", reason: `the shell parser stopped at ${parseMessage(error)}` };
  }
  const source = (node: ShNode): string => decoder.decode(bytes.subarray(node.Pos().Offset(), node.End().Offset()));
  const commands: SimpleCommand[] = [];
  const unsafe = new Set<string>();
  let statements = 0;
  syntax.Walk(file, (node) => {
    if (node === null) return true;
    switch (syntax.NodeType(node)) {
      case "Stmt":
        statements++;
        break;
      case "CallExpr":
        commands.push(callCommand(node, source, unsafe));
        break;
      case "DeclClause":
        commands.push(declCommand(node, source));
        break;
      case "LetClause":
        commands.push({ text: source(node), name: "let" });
        break;
      case "CmdSubst":
        unsafe.add("it contains a command substitution");
        break;
      case "ProcSubst":
        unsafe.add("it contains a process substitution");
        break;
      case "FuncDecl":
        unsafe.add("it defines a function");
        break;
      case "Redirect":
        checkRedirect(node, bytes, unsafe);
        break;
    }
    return true;
  });
  if (statements === 0) return { status: "empty" };
  return { status: "parsed", commands, unsafe: [...unsafe] };
}

function callCommand(node: ShNode, source: (node: ShNode) => string, unsafe: Set<string>): SimpleCommand {
  const assigns = (node["Assigns"] as ShNode[] | null) ?? [];
  const args = (node["Args"] as ShNode[] | null) ?? [];
  const words = assigns.map((assign) => assignText(assign, source));
  const first = args[0];
  let name: string | undefined;
  if (first !== undefined) {
    if (!isLiteralWord(first)) unsafe.add(`its command name ${JSON.stringify(source(first))} is an expansion`);
    name = wordText(first, source);
    if (CODE_RUNNERS.has(name)) unsafe.add(`it runs text as code with ${JSON.stringify(name)}`);
  }
  for (const arg of args) words.push(wordText(arg, source));
  return { text: words.join(" "), name };
}

function declCommand(node: ShNode, source: (node: ShNode) => string): SimpleCommand {
  const variant = node["Variant"] as ShNode;
  const name = String(variant["Value"]);
  const args = (node["Args"] as ShNode[] | null) ?? [];
  return { text: [name, ...args.map((arg) => assignText(arg, source))].join(" "), name };
}

function assignText(assign: ShNode, source: (node: ShNode) => string): string {
  const name = assign["Name"] as ShNode | null;
  const value = assign["Value"] as ShNode | null;
  if (name === null) return value === null ? source(assign) : wordText(value, source);
  if (assign["Naked"] === true) return String(name["Value"]);
  // Arrays and indexes (`a[0]=x`, `a=(x y)`) are kept as written.
  if (assign["Array"] !== null && assign["Array"] !== undefined) return source(assign);
  if (assign["Index"] !== null && assign["Index"] !== undefined) return source(assign);
  const op = assign["Append"] === true ? "+=" : "=";
  return `${String(name["Value"])}${op}${value === null ? "" : wordText(value, source)}`;
}

/** A word made of literal text and quotes only: nothing a shell would expand. */
function isLiteralWord(word: ShNode): boolean {
  return partsOf(word).every((part) => {
    const type = syntax.NodeType(part);
    if (type === "Lit" || type === "SglQuoted") return true;
    return type === "DblQuoted" && partsOf(part).every((inner) => syntax.NodeType(inner) === "Lit");
  });
}

function partsOf(node: ShNode): ShNode[] {
  return (node["Parts"] as ShNode[] | null) ?? [];
}

/** The word after quote removal, with every expansion kept as its source text. */
function wordText(word: ShNode, source: (node: ShNode) => string): string {
  let out = "";
  for (const part of partsOf(word)) {
    switch (syntax.NodeType(part)) {
      case "Lit":
        out += unescapeBare(String(part["Value"]));
        break;
      case "SglQuoted":
        out += part["Dollar"] === true ? decodeAnsiC(String(part["Value"])) : String(part["Value"]);
        break;
      case "DblQuoted":
        for (const inner of partsOf(part)) {
          out += syntax.NodeType(inner) === "Lit" ? unescapeDoubleQuoted(String(inner["Value"])) : source(inner);
        }
        break;
      default:
        out += source(part);
    }
  }
  return out;
}

/** Outside quotes a backslash quotes the next character. */
function unescapeBare(text: string): string {
  return text.replace(/\\([\s\S])/g, "$1");
}

/** Inside double quotes a backslash quotes only `$`, `` ` ``, `"`, `\` and a newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, ch: string) => (ch === "\n" ? "" : ch));
}

const ANSI_C: Readonly<Record<string, string>> = {
  a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
};

/** bash's `$'…'` escapes. */
function decodeAnsiC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|[\s\S])/g, (whole, esc: string) => {
    const head = esc[0] ?? "";
    if (head === "x" || head === "u" || head === "U") return codePoint(parseInt(esc.slice(1), 16), whole);
    if (/^[0-7]/.test(esc)) return codePoint(parseInt(esc, 8) & 0xff, whole);
    if (head === "c" && esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
    return ANSI_C[esc] ?? whole;
  });
}

function codePoint(value: number, fallback: string): string {
  return Number.isInteger(value) && value >= 0 && value <= 0x10ffff ? String.fromCodePoint(value) : fallback;
}

function checkRedirect(node: ShNode, bytes: Uint8Array, unsafe: Set<string>): void {
  const word = node["Word"] as ShNode | null;
  const fd = node["N"] as ShNode | null;
  if (word === null) return;
  const opStart = fd === null ? node.Pos().Offset() : fd.End().Offset();
  const op = decoder.decode(bytes.subarray(opStart, word.Pos().Offset())).trim();
  const target = literalTarget(word);
  if (op === "<<" || op === "<<-") {
    const quoted = partsOf(word).some((part) => syntax.NodeType(part) !== "Lit" || String(part["Value"]).includes("\\"));
    if (!quoted) unsafe.add("it has a here-document whose delimiter is unquoted (its body is expanded)");
    return;
  }
  if (op === ">&") {
    // `2>&1` and `>&-` duplicate or close descriptors; `>& file` writes the file.
    if (target !== undefined && /^(?:[0-9]+-?|-)$/.test(target)) return;
    unsafe.add(`it redirects output to ${JSON.stringify(target ?? "an expansion")}`);
    return;
  }
  if (WRITING.has(op) && target !== "/dev/null") {
    unsafe.add(`it redirects output to ${JSON.stringify(target ?? "an expansion")}`);
  }
}

function literalTarget(word: ShNode): string | undefined {
  const parts = partsOf(word);
  if (!parts.every((part) => syntax.NodeType(part) === "Lit" || syntax.NodeType(part) === "SglQuoted")) return undefined;
  return parts.map((part) => String(part["Value"])).join("");
}

function parseMessage(error: unknown): string {
  if (error !== null && typeof error === "object") {
    const message = (error as { Error?: () => string; message?: unknown }).Error?.() ?? (error as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") return message.replace(/^command:/, "");
  }
  return "syntax error";
}
