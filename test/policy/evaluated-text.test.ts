/**
 * Text bash evaluates as code although the parser sees only a quoted word or
 * a name (issue 34, item 1). Each line is first run by a real bash in a
 * temporary directory to show that it does run its payload (`touch ran`),
 * then analysed: it must be listed as unsafe, and a policy that approves
 * every command (`commands: ["*"]`) must still not approve it. Lines that
 * name nothing are the control: bash runs nothing and they stay approvable.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { analyseCommandLine, decide, parsePolicy } from "../../src/policy/index.js";

const ANYTHING = parsePolicy(
  "version: 1\ndefault: approve\nrules:\n  - id: anything\n    kind: command\n    commands: ['*']\n    action: approve\n",
  "anything.yaml",
);
const P = "$(touch ran)";

/** Lines that run `touch ran` in bash 5.2 without a command substitution the parser would see outside quotes. */
const EVALUATED = [
  `[[ 'a[${P}]' -eq 0 ]] && ls`,
  `[[ 'a[${P}]' -ne 0 ]] && ls`,
  `[[ 'a[${P}]' -lt 0 ]]; ls`,
  `[[ 0 -le 'a[${P}]' ]]; ls`,
  `[[ 'a[${P}]' -gt 0 ]]; ls`,
  `[[ 'a[${P}]' -ge 0 ]]; ls`,
  `x='a[${P}]'; [[ $x -eq 0 ]]; ls`,
  `(( 'a[${P}]' )); ls`,
  `x='a[${P}]'; (( x )); ls`,
  `echo $(( 'a[${P}]' ))`,
  `echo $[ 'a[${P}]' ]`,
  `for (( i='a[${P}]'; 0; )); do :; done; ls`,
  `let 'a[${P}]'; ls`,
  `echo \${a['${P}']}`,
  `a=(1 2); echo \${#a['${P}']}`,
  `x='a[${P}]'; echo \${y[x]}`,
  `a['${P}']=1; ls`,
  `a=(['${P}']=2); ls`,
  `x=abc; echo \${x:'a[${P}]'}`,
  `x=abc; echo \${x:0:'a[${P}]'}`,
  `x='${P}'; echo \${x@P}`,
  `x='a[${P}]'; echo \${!x}`,
  `printf -v 'a[${P}]' x; ls`,
  `read 'a[${P}]' <<< x; ls`,
  `a=(1 2); unset 'a[${P}]'; ls`,
  `declare -i x='a[${P}]'; ls`,
  `declare 'a[${P}]=1'; ls`,
  `declare -n r='a[${P}]'; echo $r`,
  `[[ -v 'a[${P}]' ]]; ls`,
  `test -v 'a[${P}]'; ls`,
  `[ -v 'a[${P}]' ]; ls`,
  `trap 'touch ran' EXIT; ls`,
  `command eval 'touch ran'`,
  `exec touch ran`,
];

/** Controls: arithmetic on digits, `@`/`*` subscripts, `${x@E}`/`${x@Q}`, plain names. */
const INERT = [
  "echo $((1 + 2)) $[3 * 4]",
  "a=(1 2); echo ${a[0]} ${a[@]} ${#a[*]} ${!a[@]}",
  "x=abcdef; echo ${x:1:3}",
  `x='${P}'; echo \${x@E} \${x@Q}`,
  "[[ 1 -eq 1 ]] && ls",
  "[[ -v HOME ]] && test -v HOME && ls",
  "printf -v out %s x; read -r line <<< x; echo ok",
  `echo '[[ a -eq 0 ]]' "\${HOME}"`,
];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Whether bash, running `line` in a fresh directory, created `ran` there. */
function bashRuns(line: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), "agyb-evaluated-"));
  dirs.push(dir);
  spawnSync("bash", ["-c", line], { cwd: dir, stdio: "ignore", env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } });
  return existsSync(join(dir, "ran"));
}

const hasBash = spawnSync("bash", ["-c", "true"]).status === 0;

describe("text bash evaluates as code", () => {
  it.each(EVALUATED)("%s: bash runs it, and no rule approves it", (line) => {
    if (hasBash) expect(bashRuns(line), "bash ran the payload").toBe(true);
    const analysis = analyseCommandLine(line);
    expect(analysis.status).toBe("parsed");
    if (analysis.status === "parsed") expect(analysis.unsafe.length, JSON.stringify(analysis)).toBeGreaterThan(0);
    const decision = decide(ANYTHING, { kind: "command", commandLine: line });
    expect({ decision: decision.decision, rule: decision.rule }).toEqual({ decision: "ask", rule: null });
  });

  it.each(INERT)("%s: bash runs nothing, and a rule may approve it", (line) => {
    if (hasBash) expect(bashRuns(line), "bash ran something").toBe(false);
    const analysis = analyseCommandLine(line);
    expect(analysis.status === "parsed" ? analysis.unsafe : analysis).toEqual([]);
    expect(decide(ANYTHING, { kind: "command", commandLine: line }).decision).toBe("approve");
  });
});
