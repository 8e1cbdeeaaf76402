import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import { createFailureLimiter } from "../../src/server/bearer-token.js";
import { buildOpenApiDocument } from "../../src/server/openapi.js";
import { startApiHarness, TEST_TOKEN } from "./support/api-harness.js";
import { createScriptedSession, permissionRequested } from "./support/scripted-session.js";
import { rawRequest } from "./support/raw-http.js";

const root = new URL("../../", import.meta.url);

describe("the OpenAPI contract", () => {
  it("matches docs/openapi.json (regenerate with `npm run openapi` after changing the contract)", () => {
    const { version } = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string };
    const committed = JSON.parse(readFileSync(new URL("docs/openapi.json", root), "utf8")) as unknown;
    expect(buildOpenApiDocument(version)).toEqual(committed);
  });

  it("describes every route the server answers, and the server serves it at /v1/openapi.json", async () => {
    const h = await startApiHarness();
    try {
      const res = await h.fetch("/v1/openapi.json");
      const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
      const routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
      expect(routes.sort()).toEqual(
        [
          "GET /",
          "GET /sw.js",
          "GET /manifest.webmanifest",
          "GET /icon.svg",
          "POST /v1/pairing",
          "POST /v1/pairing/codes",
          "GET /v1/push/key",
          "POST /v1/push/subscriptions",
          "DELETE /v1/push/subscriptions",
          "POST /v1/actions",
          "GET /v1/openapi.json",
          "GET /v1/sessions",
          "GET /v1/sessions/{conversationId}/events",
          "GET /v1/sessions/{conversationId}/pending",
          "POST /v1/sessions/{conversationId}/interactions/{interactionId}",
          "GET /v1/sessions/{conversationId}/interactions/{interactionId}/proposed-rule",
          "GET /v1/rules",
          "DELETE /v1/rules/{ruleId}",
          "POST /v1/sessions/{conversationId}/interrupt",
          "POST /v1/sessions/{conversationId}/turns",
        ].sort(),
      );
      expect(JSON.stringify(doc)).not.toContain(TEST_TOKEN);
    } finally {
      await h.close();
    }
  });

  it("lists every status each route answers, as provoked here against a real server", async () => {
    const h = await startApiHarness({ limiter: createFailureLimiter({ maxFailures: 1 }) });
    try {
      const doc = (await (await h.fetch("/v1/openapi.json")).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
      const port = Number(new URL(h.url).port);
      // conv-a answers every request with a failure of its own kind, in turn.
      const failures: Array<() => never> = [];
      const session = createScriptedSession("conv-a", { respond: async () => failures.shift()!() });
      session.sendTurn = async () => failures.shift()!();
      session.interrupt = async () => failures.shift()!();
      h.addSession("conv-a", session);
      await h.hub.refresh();
      const seen = new Set<string>();
      const routes: Array<[string, string, string, string | undefined]> = [
        ["GET", "/", "/", undefined],
        ["GET", "/sw.js", "/sw.js", undefined],
        ["GET", "/manifest.webmanifest", "/manifest.webmanifest", undefined],
        ["GET", "/icon.svg", "/icon.svg", undefined],
        ["POST", "/v1/pairing", "/v1/pairing", '{"code":"not-a-code"}'],
        ["POST", "/v1/pairing/codes", "/v1/pairing/codes", undefined],
        ["GET", "/v1/push/key", "/v1/push/key", undefined],
        ["POST", "/v1/push/subscriptions", "/v1/push/subscriptions", '{"endpoint":"https://push.example/x","keys":{"p256dh":"a","auth":"b"}}'],
        ["GET", "/v1/sessions", "/v1/sessions", undefined],
        ["GET", "/v1/openapi.json", "/v1/openapi.json", undefined],
        ["GET", "/v1/sessions/{conversationId}/events", "/v1/sessions/conv-a/events", undefined],
        ["GET", "/v1/sessions/{conversationId}/pending", "/v1/sessions/conv-a/pending", undefined],
        ["POST", "/v1/sessions/{conversationId}/interactions/{interactionId}", "/v1/sessions/conv-a/interactions/int_x", '{"action":"approve"}'],
        ["POST", "/v1/sessions/{conversationId}/turns", "/v1/sessions/conv-a/turns", '{"text":"go"}'],
        ["POST", "/v1/sessions/{conversationId}/interrupt", "/v1/sessions/conv-a/interrupt", undefined],
        ["GET", "/v1/rules", "/v1/rules", undefined],
        ["DELETE", "/v1/rules/{ruleId}", "/v1/rules/learned-0", undefined],
        ["GET", "/v1/sessions/{conversationId}/interactions/{interactionId}/proposed-rule", "/v1/sessions/conv-a/interactions/int_x/proposed-rule", undefined],
      ];
      const raw = async (method: string, path: string, headers: string, body = "") =>
        (
          await rawRequest(
            port,
            `${method} ${path} HTTP/1.1\r\n${headers}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          )
        ).status;
      const host = `Host: 127.0.0.1:${port}\r\n`;
      const auth = `Authorization: Bearer ${TEST_TOKEN}\r\n`;
      for (const [method, template, path, body] of routes) {
        const note = (status: number) => seen.add(`${method} ${template} ${status}`);
        note(await raw(method, path, `${host}${auth}`, body));
        note(await raw(method, path, `${auth}`, body).catch(() => 0)); // no Host
        note(await raw(method, path, `${host}Origin: https://evil.example\r\n${auth}`, body));
        if (!template.startsWith("/v1/")) continue;
        note(await raw(method, path, host, body)); // 401
        note(await raw(method, path, `${host}Authorization: Bearer wrong-wrong-wrong-wrong\r\n`, body)); // 429 once limited
        if (template.includes("{conversationId}")) note(await raw(method, path.replace("conv-a", "conv-none"), `${host}${auth}`, body));
        if (template.endsWith("/events")) {
          note(await raw(method, path, `${host}${auth}Last-Event-ID: ${h.hub.epoch}-999\r\n`));
          continue;
        }
        if (method !== "POST") continue;
        if (body !== undefined) {
          note(await raw(method, path, `${host}${auth}`, "{"));
          note(await raw(method, path, `${host}${auth}`, "x".repeat(3 * 1024 * 1024)).catch(() => 413));
        }
        for (const failure of [
          () => {
            throw new AgyBridgeError("transport", "agy's language server is gone");
          },
          () => {
            throw new AgyBridgeError("invalid_argument", "that does not fit");
          },
          () => {
            throw new Error("a bug");
          },
        ]) {
          failures.push(failure as () => never);
          note(await raw(method, path, `${host}${auth}`, body));
        }
      }
      // The rest comes from the session's answers, not its failures.
      const turns = [{ result: "refused" as const, refusal: "no_pane" as const, reason: "no pane" }];
      session.sendTurn = async () => turns.shift()!;
      seen.add(`POST /v1/sessions/{conversationId}/turns ${await raw("POST", "/v1/sessions/conv-a/turns", `${host}${auth}`, '{"text":"go"}')}`);
      session.push(permissionRequested("conv-a", 6, "pwd"));
      const pid = (permissionRequested("conv-a", 6, "pwd") as { interactionId: string }).interactionId;
      for (let i = 0; i < 100 && h.hub.get("conv-a")?.pending().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const route = "POST /v1/sessions/{conversationId}/interactions/{interactionId}";
      seen.add(`${route} ${await raw("POST", `/v1/sessions/conv-a/interactions/${pid}`, `${host}${auth}`, '{"action":"answer","optionIds":["1"]}')}`);
      const proposed = "GET /v1/sessions/{conversationId}/interactions/{interactionId}/proposed-rule";
      seen.add(`${proposed} ${await raw("GET", `/v1/sessions/conv-a/interactions/${pid}/proposed-rule`, `${host}${auth}`)}`);
      seen.add(`${proposed} ${await raw("GET", `/v1/sessions/conv-a/interactions/${pid}/proposed-rule?scope=x`, `${host}${auth}`)}`);
      session.respond = async () => ({ result: "already_resolved", stepIndex: 6 });
      seen.add(`${route} ${await raw("POST", `/v1/sessions/conv-a/interactions/${pid}`, `${host}${auth}`, '{"action":"approve"}')}`);
      const missing = [...seen].filter((entry) => {
        const [method, template, status] = entry.split(" ") as [string, string, string];
        return doc.paths[template]?.[method.toLowerCase()]?.responses[status] === undefined;
      });
      expect(missing, "statuses the server answered that the OpenAPI document does not list").toEqual([]);
      const statuses = new Set([...seen].map((e) => e.split(" ")[2]));
      for (const status of ["200", "400", "401", "403", "404", "409", "413", "422", "429", "500", "502"]) expect(statuses, status).toContain(status);
    } finally {
      await h.close();
    }
  });
});
