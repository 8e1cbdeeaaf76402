import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../src/server/openapi.js";
import { startApiHarness, TEST_TOKEN } from "./support/api-harness.js";

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
          "GET /v1/openapi.json",
          "GET /v1/sessions",
          "GET /v1/sessions/{conversationId}/events",
          "GET /v1/sessions/{conversationId}/pending",
          "POST /v1/sessions/{conversationId}/interactions/{interactionId}",
          "POST /v1/sessions/{conversationId}/interrupt",
          "POST /v1/sessions/{conversationId}/turns",
        ].sort(),
      );
      expect(JSON.stringify(doc)).not.toContain(TEST_TOKEN);
    } finally {
      await h.close();
    }
  });
});
