/**
 * Redaction of the usual spellings of credentials, and its prefix stability
 * across stream frames: agy streams a planner's text as it is generated, so
 * a capture holds frames cut anywhere — inside a token, inside an e-mail
 * address, inside a PEM block. For every spelling and every cut point, the
 * redacted prefix is a prefix of the redacted whole text (so `map DIR` sees
 * deltas, never a `non_prefix_rewrite` the raw conversation did not have),
 * and no frame carries a fragment of the secret.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRedactor, type Redactor } from "../../src/capture/redaction/redactor.js";
import { createTrajectoryTracker } from "../../src/mapper/trajectory-tracker.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";

/** Each spelling, and the secret part of it that must not survive (nor any fragment of it of FRAGMENT characters). */
const SPELLINGS: ReadonlyArray<{ name: string; text: string; secret: string }> = [
  { name: "DB_PASSWORD=", text: "DB_PASSWORD=Hq7vLp2Rz9", secret: "Hq7vLp2Rz9" },
  { name: "GITHUB_TOKEN=", text: "GITHUB_TOKEN=Wm4kTz8Pq1Jd", secret: "Wm4kTz8Pq1Jd" },
  { name: "?access_token=", text: "https://api.example.net/v1/items?page=2&access_token=Zt5Yb8Kc2Lm9&x=1", secret: "Zt5Yb8Kc2Lm9" },
  { name: "client_secret=", text: "client_secret=Rf3Gh7Jk1Qs5", secret: "Rf3Gh7Jk1Qs5" },
  { name: "JSON apiKey", text: '{"apiKey": "Vb6Nm2Xc8Lk4"}', secret: "Vb6Nm2Xc8Lk4" },
  { name: "BEARER", text: "curl -H 'Authorization: BEARER Pw9Er4Ty7Ui2Op' https://x", secret: "Pw9Er4Ty7Ui2Op" },
  { name: "Authorization: Basic", text: "Authorization: Basic dXNlcjpRa3o4VnQ=", secret: "dXNlcjpRa3o4VnQ=" },
  { name: "https://user:pass@host", text: "git clone https://deploy:Mz7Lq3Rt9Wx@git.example.org/repo.git", secret: "Mz7Lq3Rt9Wx" },
  { name: "https://TOKEN@host", text: "https://ghx9Kd3Jf7Lp2Qz@github.com/o/r.git", secret: "ghx9Kd3Jf7Lp2Qz" },
  { name: "curl -u", text: "curl -u admin:Tq8Wz2Xv6Ny https://x", secret: "Tq8Wz2Xv6Ny" },
  { name: "AWS access key id", text: "aws_access_key_id = AKIAQ7XZR3KDPLM2VNWT", secret: "Q7XZR3KDPLM2VNWT" },
  { name: "AWS access key id alone", text: "key ASIAQ7XZR3KDPLM2VNWT in use", secret: "Q7XZR3KDPLM2VNWT" },
  { name: "AWS secret", text: "aws_secret_access_key=wJa9rXUtnFEMIK7MDENGbPxRfiCYz3KEY2xq", secret: "wJa9rXUtnFEMIK7MDENGbPxRfiCYz3KEY2xq" },
  {
    name: "PEM private key",
    text: "-----BEGIN RSA PRIVATE KEY-----\nMIIEpQIBAAKCAQEA3Tz2mQ9\nZk8Lw4Rj7Hn2Vb6Qx1Ct5\n-----END RSA PRIVATE KEY-----\ndone",
    secret: "MIIEpQIBAAKCAQEA3Tz2mQ9\nZk8Lw4Rj7Hn2Vb6Qx1Ct5",
  },
  {
    name: "OpenSSH private key",
    text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    secret: "b3BlbnNzaC1rZXktdjEAAAAA",
  },
  { name: "Stripe live key", text: "stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dc ok", secret: "4eC39HqLyjWDarjtT1zdp7dc" },
  { name: "Stripe restricted key", text: "rk_live_51Hq8Wz2Xv6NyTq8Wz2Xv6Ny", secret: "51Hq8Wz2Xv6NyTq8Wz2Xv6Ny" },
  { name: "npm token", text: "//registry.npmjs.org/:_authToken=npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi", secret: "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi" },
  { name: "npm token alone", text: "use npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi now", secret: "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi" },
  { name: "GitLab token", text: "glpat-Xy7Zq2Wv5Ur8Ts1Rq4Po", secret: "Xy7Zq2Wv5Ur8Ts1Rq4Po" },
  { name: "GitHub classic token", text: "ghp_R8fK2mQ9vL4wX7zT1nB5cY3hJ6dS0aE2gUxx", secret: "R8fK2mQ9vL4wX7zT1nB5cY3hJ6dS0aE2gUxx" },
  { name: "GitHub OAuth token", text: "gho_R8fK2mQ9vL4wX7zT1nB5cY3hJ6dS0aE2gUxx", secret: "R8fK2mQ9vL4wX7zT1nB5cY3hJ6dS0aE2gUxx" },
  {
    name: "GitHub fine-grained token",
    text: "github_pat_11ABCDE2Y0Rq8Wz2Xv6Ny_Tq8Wz2Xv6NyTq8Wz2Xv6Ny",
    secret: "11ABCDE2Y0Rq8Wz2Xv6Ny_Tq8Wz2Xv6NyTq8Wz2Xv6Ny",
  },
  { name: "GitHub token after _", text: "X_ghp_R8fK2mQ9vL4wX7zT1nB5cY3hJ6dS0aE2gUxx", secret: "R8fK2mQ9vL4wX7zT1nB5cY3hJ6dS0aE2gUxx" },
  { name: "Slack bot token", text: "xoxb-2048-40961-Kq8Wz2Xv6NyTq8", secret: "40961-Kq8Wz2Xv6NyTq8" },
  { name: "Slack user token", text: "xoxp-2048-40961-Kq8Wz2Xv6NyTq8", secret: "40961-Kq8Wz2Xv6NyTq8" },
  { name: "Google API key", text: "AIzaSyB7Kq8Wz2Xv6NyTq8Wz2Xv6NyTq8Wz2Xv", secret: "SyB7Kq8Wz2Xv6NyTq8Wz2Xv6NyTq8Wz2Xv" },
  { name: "JWT", text: "id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Kq8Wz2Xv6NyTq8Wz2Xv6", secret: "eyJzdWIiOiIxIn0.Kq8Wz2Xv6NyTq8Wz2Xv6" },
];

/** No run of this many characters of a secret may survive anywhere. */
const FRAGMENT = 5;

function fragments(secret: string): string[] {
  const out: string[] = [];
  for (const part of secret.split(/\s+/)) for (let i = 0; i + FRAGMENT <= part.length; i++) out.push(part.slice(i, i + FRAGMENT));
  return out;
}

function leaked(text: string, secret: string): string | undefined {
  return fragments(secret).find((f) => text.includes(f));
}

const TRAJECTORY = "d24e8b90-5a17-4c3e-8f02-6b9e1a7c4f35";
const CONVERSATION = "7c1f3a52-0d4e-4b8a-9e61-2f5b8c3d9a10";

function planner(response: string, status: "GENERATING" | "DONE"): Record<string, unknown> {
  return {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: `CORTEX_STEP_STATUS_${status}`,
    metadata: {
      createdAt: "2026-07-14T09:12:21.000100Z",
      source: "CORTEX_STEP_SOURCE_MODEL",
      sourceTrajectoryStepInfo: { trajectoryId: TRAJECTORY, stepIndex: 0, cascadeId: CONVERSATION },
    },
    plannerResponse: { response, thinking: response, messageId: "bot-5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" },
  };
}

function frame(response: string, status: "GENERATING" | "DONE"): { update: StreamUpdate } {
  return {
    update: {
      conversationId: CONVERSATION,
      trajectoryId: TRAJECTORY,
      status: status === "DONE" ? "CASCADE_RUN_STATUS_IDLE" : "CASCADE_RUN_STATUS_RUNNING",
      mainTrajectoryUpdate: { stepsUpdate: { indices: [0], steps: [planner(response, status)], totalLength: 1 } },
    } as StreamUpdate,
  };
}

const keepAll = (): Redactor => createRedactor({ keepText: true, keepCommands: true, users: ["alice"], hosts: ["devbox-7"] });

/** The redacted response and thinking of one frame. */
function redactedTexts(r: Redactor, response: string, status: "GENERATING" | "DONE"): string[] {
  const out = r.json(frame(response, status)) as {
    update: { mainTrajectoryUpdate: { stepsUpdate: { steps: Array<{ plannerResponse: { response: string; thinking: string } }> } } };
  };
  const body = out.update.mainTrajectoryUpdate.stepsUpdate.steps[0]!.plannerResponse;
  return [body.response, body.thinking];
}

/** Redacts every prefix of `text` (cut after `cuts[i]` characters, in order) as GENERATING frames, then the whole as DONE. */
function stream(r: Redactor, text: string, cuts: readonly number[]): string[][] {
  return [...cuts.map((cut) => redactedTexts(r, text.slice(0, cut), "GENERATING")), redactedTexts(r, text, "DONE")];
}

function expectPrefixChain(frames: readonly string[][], what: string): void {
  for (let i = 1; i < frames.length; i++) {
    for (const field of [0, 1]) {
      const before = frames[i - 1]![field]!;
      const after = frames[i]![field]!;
      expect(after.startsWith(before), `${what}: frame ${i - 1} ${JSON.stringify(before)} is not a prefix of frame ${i} ${JSON.stringify(after)}`).toBe(true);
    }
  }
}

describe("redaction of credentials", () => {
  it.each(SPELLINGS)("masks $name whole, keeping the text's length", ({ text, secret }) => {
    for (const r of [keepAll(), createRedactor({ keepText: true }), createRedactor()]) {
      const prose = `Before ${text} after`;
      const [response] = redactedTexts(r, prose, "DONE");
      expect(leaked(response!, secret), response).toBeUndefined();
      expect(response).toHaveLength(prose.length);
    }
  });

  it("masks a value under a key that names a credential, and keeps token counts", () => {
    const out = keepAll().json({
      env: { DB_PASSWORD: "hunter2", clientSecret: "Rf3Gh7Jk1Qs5", accessToken: "Zt5Yb8Kc2Lm9" },
      usage: { inputTokens: "1234", outputTokens: "56" },
    });
    expect(out).toEqual({
      env: { DB_PASSWORD: "xxxxxxx", clientSecret: "xxxxxxxxxxxx", accessToken: "xxxxxxxxxxxx" },
      usage: { inputTokens: "1234", outputTokens: "56" },
    });
  });

  it("masks an all-capitals token in default mode instead of keeping it as an enum name, and keeps agy's enum names", () => {
    const out = createRedactor().json({
      userInput: { items: [{ text: "AKIAIOSFODNN7EXAMPLE" }, { text: "JBSWY3DPEHPK3PXPJBSW" }] },
      status: "CASCADE_RUN_STATUS_IDLE",
      other: "CORTEX_STEP_STATUS_DONE",
      word: "DONE",
    });
    expect(JSON.stringify(out)).not.toMatch(/AKIA|IOSFODNN|JBSWY|EHPK3/);
    expect(out).toMatchObject({ status: "CASCADE_RUN_STATUS_IDLE", other: "CORTEX_STEP_STATUS_DONE", word: "DONE" });
  });
});

describe("prefix stability across stream frames", () => {
  it.each(SPELLINGS)(
    "at every cut point of $name, each frame's redaction is a prefix of the next and carries no fragment of the secret",
    ({ name, text, secret }) => {
      const prose = `Here it is: ${text} and mail alice.liddell@wonderland.example from devbox-7 please`;
      const cuts = Array.from({ length: prose.length + 1 }, (_, i) => i);
      const frames = stream(keepAll(), prose, cuts);
      expectPrefixChain(frames, name);
      for (const [i, texts] of frames.entries()) {
        for (const t of texts) {
          expect(leaked(t, secret), `${name}, cut ${cuts[i] ?? "whole"}: ${JSON.stringify(t)}`).toBeUndefined();
          expect(t).not.toMatch(/liddell|wonderland|alice|devbox/);
        }
      }
    },
  );

  it("holds for any text built of prose, e-mails, paths and secrets, cut anywhere, in any redaction mode", () => {
    const pieces = fc.constantFrom(
      "the",
      "build",
      "passed",
      "42",
      "OK",
      "DONE",
      "\n",
      " ",
      ".",
      "alice.liddell@wonderland.example",
      "/home/alice/work/app/notes.md",
      "f47ac10b-58cc-4372-a567-0e02b2c3d479",
      ...SPELLINGS.map((s) => s.text),
    );
    const texts = fc.array(pieces, { minLength: 1, maxLength: 12 }).map((parts) => parts.join(" "));
    fc.assert(
      fc.property(texts, fc.uniqueArray(fc.nat(), { maxLength: 8 }), fc.constantFrom("keep", "text", "masked"), (text, raw, mode) => {
        const cuts = [...new Set(raw.map((n) => n % (text.length + 1)))].sort((a, b) => a - b);
        const r = mode === "keep" ? keepAll() : mode === "text" ? createRedactor({ keepText: true, home: "/home/alice" }) : createRedactor();
        const frames = stream(r, text, cuts);
        expectPrefixChain(frames, `${mode} ${JSON.stringify(text)} cut at ${cuts.join(",")}`);
        for (const texts of frames)
          for (const t of texts) for (const s of SPELLINGS) if (text.includes(s.text)) expect(leaked(t, s.secret), JSON.stringify(t)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it("holds back the unfinished last token of a running command's output, and keeps its command line whole", () => {
    const output = "cloning with https://deploy:Mz7Lq3Rt9Wx@git.example.org/repo.git then GITHUB_TOKEN=Wm4kTz8Pq1Jd done";
    const command = (full: string, status: "RUNNING" | "DONE") => ({
      type: "CORTEX_STEP_TYPE_RUN_COMMAND",
      status: `CORTEX_STEP_STATUS_${status}`,
      runCommand: { commandLine: "git clone repo", combinedOutput: { full } },
    });
    const r = keepAll();
    const outputs: string[] = [];
    for (let cut = 0; cut <= output.length; cut++) {
      const out = r.json(command(output.slice(0, cut), "RUNNING")) as { runCommand: { commandLine: string; combinedOutput: { full: string } } };
      expect(out.runCommand.commandLine).toBe("git clone repo");
      outputs.push(out.runCommand.combinedOutput.full);
    }
    outputs.push((r.json(command(output, "DONE")) as { runCommand: { combinedOutput: { full: string } } }).runCommand.combinedOutput.full);
    for (let i = 1; i < outputs.length; i++) expect(outputs[i]!.startsWith(outputs[i - 1]!), `${outputs[i - 1]} / ${outputs[i]}`).toBe(true);
    for (const text of outputs) for (const secret of ["Mz7Lq3Rt9Wx", "Wm4kTz8Pq1Jd"]) expect(leaked(text, secret), text).toBeUndefined();
    expect(outputs.at(-1)).toHaveLength(output.length);
  });

  it("gives the mapper deltas, not a non_prefix_rewrite, for a kept text whose frames cut an e-mail address", () => {
    const text = "Mail alice.liddell@wonderland.example about the deploy";
    const r = keepAll();
    const tracker = createTrajectoryTracker({ conversationId: r.id(CONVERSATION) });
    const events = [10, 22, 30, 38, text.length].flatMap((cut) => tracker.applyStreamUpdate(r.json(frame(text.slice(0, cut), "GENERATING")).update));
    events.push(...tracker.applyStreamUpdate(r.json(frame(text, "DONE")).update));
    expect(events.filter((e) => e.type === "diagnostic")).toEqual([]);
    const deltas = events.flatMap((e) => (e.type === "message_delta" ? [e.text] : []));
    expect(deltas.join("")).toBe(redactedTexts(keepAll(), text, "DONE")[0]);
    expect(deltas.join("")).not.toMatch(/liddell|wonderland/);
  });
});
