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
 * output redirection to a file) is listed in `unsafe` with a sentence each —
 * and so is text bash evaluates as code although the parser sees a quoted
 * word or a name: arithmetic (`[[ X -eq 0 ]]`, `(( X ))`, `$(( X ))`,
 * `let`, array subscripts, slices, `declare -i`), whose names and quoted
 * text bash expands again, running the `$(…)` in them; `${x@P}`; indirect
 * `${!x}`; variable names with subscripts given to builtins (`printf -v`,
 * `read`, `unset`, `test -v`); `trap`, `exec` (docs/policy.md).
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
  /** The command's words after quote removal, assignments excluded (a learned rule's prefix is cut from them). */
  words?: string[];
}

export type CommandAnalysis =
  | { status: "parsed"; commands: SimpleCommand[]; unsafe: string[] }
  | { status: "empty" }
  | { status: "unparseable"; reason: string };

/** Commands that run text as code (now or later, as `trap` does): a rule cannot see what they will do. */
const CODE_RUNNERS = new Set(["eval", "source", ".", "trap", "fc", "enable"]);
/** Builtins that run the next word as the command: `command eval …` is `eval …`. */
const PASS_THROUGH = new Set(["command", "builtin"]);
/**
 * Builtins that take variable names: a name with a subscript (`a[$(id)]`,
 * quoted or not) has it evaluated as arithmetic, which runs the command
 * substitutions in it (bash 5.2: `read 'a[$(id)]'`, `unset 'a[$(id)]'`).
 */
const NAME_TAKERS = new Set(["read", "unset", "mapfile", "readarray", "getopts", "wait"]);
/** `[[ X -eq Y ]]` and its kin evaluate both sides as arithmetic. */
const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
/**
 * Arithmetic that names nothing: digits and operators only. Anything else
 * (a name, a quote, a `$`) is evaluated by bash, and a name's value is
 * evaluated again as arithmetic: `x='a[$(id)]'; (( x ))` runs `id`.
 */
const INERT_ARITHMETIC = /^[\s0-9+\-*/%()<>=!&|^~?:,]*$/;
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
        checkDecl(node, source, unsafe);
        break;
      case "LetClause":
        commands.push({ text: source(node), name: "let" });
        arithmetic(source(node).replace(/^let\b/, ""), JSON.stringify(source(node)), unsafe);
        break;
      case "ArithmExp":
      case "ArithmCmd":
      case "CStyleLoop":
        arithmetic(source(node).replace(/^(?:\$\(\(|\$\[|\(\()|(?:\)\)|\])$/g, ""), JSON.stringify(source(node)), unsafe);
        break;
      case "ParamExp":
        checkParamExp(node, source, unsafe);
        break;
      case "Assign":
      case "ArrayElem":
        checkSubscript(node["Index"] as ShNode | null | undefined, source, unsafe);
        break;
      case "BinaryTest":
        checkBinaryTest(node, source, unsafe);
        break;
      case "UnaryTest":
        checkUnaryTest(node, source, unsafe);
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
    if (name === "exec") unsafe.add(`it replaces the shell with "exec", whose words a rule does not see as a command`);
    const texts = args.map((arg) => wordText(arg, source));
    if (PASS_THROUGH.has(name)) {
      const real = texts.slice(1).find((text) => !text.startsWith("-"));
      if (real !== undefined && (CODE_RUNNERS.has(real) || real === "exec")) unsafe.add(`it runs text as code with ${JSON.stringify(`${name} ${real}`)}`);
    }
    checkNameArguments(name, args, texts, unsafe);
  }
  const argWords = args.map((arg) => wordText(arg, source));
  words.push(...argWords);
  return { text: words.join(" "), name, words: argWords };
}

/** bash evaluates `text` as arithmetic: unless it names nothing, it may run commands. */
function arithmetic(text: string, where: string, unsafe: Set<string>): void {
  if (!INERT_ARITHMETIC.test(text)) unsafe.add(`bash evaluates ${where} as arithmetic, which runs the command substitutions a name or quoted text in it holds`);
}

/** An array subscript: arithmetic for an indexed array (`a['$(id)']` runs `id`), except `@` and `*`. */
function checkSubscript(index: ShNode | null | undefined, source: (node: ShNode) => string, unsafe: Set<string>): void {
  if (index === null || index === undefined) return;
  const text = source(index).trim();
  if (text === "@" || text === "*") return;
  arithmetic(text, `the array subscript [${text}]`, unsafe);
}

function checkParamExp(node: ShNode, source: (node: ShNode) => string, unsafe: Set<string>): void {
  const text = source(node);
  checkSubscript(node["Index"] as ShNode | null | undefined, source, unsafe);
  const slice = node["Slice"] as ShNode | null | undefined;
  if (slice !== null && slice !== undefined) {
    // The walk does not enter a slice: its offset and length are checked here, whole.
    for (const key of ["Offset", "Length"]) {
      const part = slice[key] as ShNode | null | undefined;
      if (part !== null && part !== undefined) arithmetic(source(part), `the offset in ${JSON.stringify(text)}`, unsafe);
    }
  }
  const index = node["Index"] as ShNode | null | undefined;
  const keys = index !== null && index !== undefined && /^[@*]$/.test(source(index).trim());
  if (node["Excl"] === true && node["Names"] === 0 && !keys) {
    unsafe.add(`it expands ${JSON.stringify(text)} indirectly, and a name it holds may carry a subscript bash evaluates`);
  }
  // `${x@P}` expands the value as a prompt, running the command substitutions in it.
  if (node["Exp"] !== null && node["Exp"] !== undefined && /@P\}$/.test(text)) {
    unsafe.add(`it expands ${JSON.stringify(text)} as a prompt, which runs the command substitutions in the value`);
  }
}

function checkBinaryTest(node: ShNode, source: (node: ShNode) => string, unsafe: Set<string>): void {
  const x = node["X"] as ShNode;
  const y = node["Y"] as ShNode;
  const op = source({ Pos: () => x.End(), End: () => y.Pos() } as ShNode).trim();
  if (!ARITHMETIC_TESTS.has(op)) return;
  for (const side of [x, y]) arithmetic(source(side), `the operand ${JSON.stringify(source(side))} of ${op}`, unsafe);
}

function checkUnaryTest(node: ShNode, source: (node: ShNode) => string, unsafe: Set<string>): void {
  const x = node["X"] as ShNode;
  const op = source({ Pos: () => node.Pos(), End: () => x.Pos() } as ShNode).trim();
  if (op === "-v" || op === "-R") checkVariableName(x, source(x), `${op} ${source(x)}`, unsafe);
}

/** A word used as a variable name: a subscript in it, or an expansion that may hold one, is evaluated. */
function checkVariableName(word: ShNode, text: string, where: string, unsafe: Set<string>): void {
  if (!isLiteralWord(word) || text.includes("["))
    unsafe.add(`it names a variable (${JSON.stringify(where)}) whose subscript bash evaluates as arithmetic, which runs command substitutions`);
}

function checkNameArguments(name: string, args: ShNode[], texts: string[], unsafe: Set<string>): void {
  const named = (i: number) => {
    const word = args[i];
    if (word !== undefined) checkVariableName(word, texts[i] ?? "", `${name} ${texts[i] ?? ""}`, unsafe);
  };
  if (name === "printf") {
    for (let i = 1; i < args.length; i++) if (texts[i] === "-v") named(i + 1);
  } else if (name === "test" || name === "[") {
    for (let i = 1; i < args.length; i++) if (texts[i] === "-v" || texts[i] === "-R") named(i + 1);
  } else if (NAME_TAKERS.has(name)) {
    for (let i = 1; i < args.length; i++) if (!(texts[i] ?? "").startsWith("-") || !isLiteralWord(args[i]!)) named(i);
  }
}

/** `declare -i` evaluates what is assigned as arithmetic; `-n` makes a name whose use evaluates it; a name with a subscript is evaluated. */
function checkDecl(node: ShNode, source: (node: ShNode) => string, unsafe: Set<string>): void {
  const variant = String((node["Variant"] as ShNode)["Value"]);
  for (const arg of (node["Args"] as ShNode[] | null) ?? []) {
    const name = arg["Name"] as ShNode | null;
    const value = arg["Value"] as ShNode | null;
    if (name !== null) continue;
    if (value === null) continue;
    const text = wordText(value, source);
    if (/^[-+][A-Za-z]*[in]/.test(text))
      unsafe.add(`it declares with ${JSON.stringify(`${variant} ${text}`)}, whose values bash evaluates (as arithmetic, or as a name with a subscript)`);
    else if (!/^[-+]/.test(text)) checkVariableName(value, text, `${variant} ${text}`, unsafe);
  }
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
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
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
