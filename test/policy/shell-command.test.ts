import { describe, expect, it } from "vitest";
import { analyseCommandLine } from "../../src/policy/index.js";

function commands(line: string): string[] {
  const analysis = analyseCommandLine(line);
  if (analysis.status !== "parsed") throw new Error(`expected ${JSON.stringify(line)} to parse, got ${analysis.status}`);
  return analysis.commands.map((c) => c.text);
}

function unsafe(line: string): string[] {
  const analysis = analyseCommandLine(line);
  if (analysis.status !== "parsed") throw new Error(`expected ${JSON.stringify(line)} to parse, got ${analysis.status}`);
  return analysis.unsafe;
}

describe("analyseCommandLine", () => {
  it("splits lists, pipes and background jobs into simple commands", () => {
    expect(commands("a 1; b 2 && c || d | e |& f & g\nh")).toEqual(["a 1", "b 2", "c", "d", "e", "f", "g", "h"]);
  });

  it("finds the commands inside compound commands and substitutions", () => {
    expect(commands("if a; then b; elif c; then d; else e; fi")).toEqual(["a", "b", "c", "d", "e"]);
    expect(commands("for x in 1; do y $x; done; while z; do w; done")).toEqual(["y $x", "z", "w"]);
    expect(commands("case $v in a) p;; *) q;; esac")).toEqual(["p", "q"]);
    expect(commands("outer $(inner 1) `other`")).toEqual(["outer $(inner 1) `other`", "inner 1", "other"]);
    expect(commands("diff <(left) <(right)")).toEqual(["diff <(left) <(right)", "left", "right"]);
  });

  it("removes quotes and backslashes but expands nothing", () => {
    expect(commands(`echo 'a b' "c d" e\\ f $X "\${Y}" \\$Z`)).toEqual(["echo a b c d e f $X ${Y} $Z"]);
    expect(commands(`echo "q\\"q" "a\\b" "\\$"`)).toEqual([`echo q"q a\\b $`]);
    expect(commands("echo $'t\\tn\\n\\x41\\u00e9\\101\\'q'")).toEqual(["echo t\tn\nAéA'q"]);
  });

  it("keeps leading assignments as words and renders declarations", () => {
    expect(commands("A=1 B='x y' cmd arg")).toEqual(["A=1 B=x y cmd arg"]);
    expect(commands("export FOO=1 BAR")).toEqual(["export FOO=1 BAR"]);
    expect(commands("X+=2")).toEqual(["X+=2"]);
  });

  it("joins a line continuation and ignores comments", () => {
    expect(commands("git \\\n  status # rm -rf ~")).toEqual(["git status"]);
  });

  it("names each construct a rule must never approve", () => {
    expect(unsafe("a $(b)")).toEqual(["it contains a command substitution"]);
    expect(unsafe("a <(b)")).toEqual(["it contains a process substitution"]);
    expect(unsafe("eval a")).toEqual(['it runs text as code with "eval"']);
    expect(unsafe(". ./env")).toEqual(['it runs text as code with "."']);
    expect(unsafe("$X a")).toEqual(['its command name "$X" is an expansion']);
    expect(unsafe("f() { a; }")).toEqual(["it defines a function"]);
    expect(unsafe("cat <<E\nx\nE")).toEqual(["it has a here-document whose delimiter is unquoted (its body is expanded)"]);
    expect(unsafe("a > f")).toEqual(['it redirects output to "f"']);
    expect(unsafe("a &>> f")).toEqual(['it redirects output to "f"']);
    expect(unsafe("a 2> f")).toEqual(['it redirects output to "f"']);
    expect(unsafe("a >& f")).toEqual(['it redirects output to "f"']);
  });

  it("lets descriptor duplication, input and /dev/null through", () => {
    expect(unsafe("a 2>&1 >&2 3>&- < in <<< x > /dev/null 2>/dev/null &>/dev/null")).toEqual([]);
    expect(unsafe("cat <<'E'\n$(x)\nE")).toEqual([]);
  });

  it("reports empty, comment-only and unparseable lines as such", () => {
    expect(analyseCommandLine("").status).toBe("empty");
    expect(analyseCommandLine("  # only a comment").status).toBe("empty");
    const broken = analyseCommandLine("echo 'open");
    expect(broken.status).toBe("unparseable");
    if (broken.status === "unparseable") expect(broken.reason).toMatch(/1:6/);
  });

  it("reads offsets of non-ASCII text right", () => {
    expect(commands("echo é > /dev/null; ls ü")).toEqual(["echo é", "ls ü"]);
    expect(unsafe("echo é > 'ß'")).toEqual(['it redirects output to "ß"']);
  });
});
