/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table
 * (`routes.ts`) and the zod contract (`contract.ts`) it names.
 * `docs/openapi.json` is this document, committed; a test fails when the two
 * differ.
 */
import { z } from "zod";
import { MapperEventSchema, ProblemSchema } from "./contract.js";
import { ResyncSchema } from "./event-stream.js";
import { type Route, type StatusMeaning, segmentsOf, statusesOf } from "./route-spec.js";
import { ROUTES } from "./routes.js";

export { EVENT_ID_DESCRIPTION } from "./routes.js";

const schema = (s: z.ZodType, io: "input" | "output" = "output"): unknown => {
  const out = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out["$schema"];
  return out;
};

const json = (s: z.ZodType, io: "input" | "output" = "output") => ({ "application/json": { schema: schema(s, io) } });

/** `paths`: one entry per route path, one operation per method, in the table's order. */
function pathsOf(routes: readonly Route[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationOf(route);
  }
  return paths;
}

function operationOf(route: Route): Record<string, unknown> {
  const parameters = [
    ...segmentsOf(route.path).flatMap((s) => (typeof s === "string" ? [] : [{ name: s.param, in: "path", required: true, schema: { type: "string" } }])),
    ...(route.parameters ?? []),
  ];
  const security = route.auth === "public" ? [] : route.auth === "action-token" ? [{ actionToken: [] }] : undefined;
  const responses = Object.fromEntries(Object.entries(statusesOf(route)).map(([status, meaning]) => [status, responseOf(meaning)]));
  return {
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(security === undefined ? {} : { security }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(route.body === undefined ? {} : { requestBody: { required: true, content: json(route.body, "input") } }),
    responses,
  };
}

function responseOf(meaning: StatusMeaning): Record<string, unknown> {
  if (typeof meaning === "string") {
    return { description: meaning, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } };
  }
  if (meaning.schema !== undefined) return { description: meaning.description, content: json(meaning.schema) };
  if (meaning.contentType !== undefined) return { description: meaning.description, content: { [meaning.contentType]: { schema: { type: "string" } } } };
  return { description: meaning.description };
}

export function buildOpenApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "agy-bridge HTTP API",
      version,
      description:
        "Supervise attended agy sessions over HTTP: list sessions, follow events (SSE), answer approvals and questions, type turns, interrupt. Every /v1 route but POST /v1/pairing requires Authorization: Bearer <token>: the bearer token, or a paired device's token (from POST /v1/pairing), which works everywhere but POST /v1/pairing/codes. Every route, the page included, requires a Host that names this server (loopback, the listen address, or --allow-host) and refuses a foreign Origin. Errors are RFC 9457 problem details; `result` names the kind of refusal.",
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        actionToken: { type: "http", scheme: "bearer", description: "A one-time action token from a notification (POST /v1/actions only)" },
      },
      schemas: { Problem: schema(ProblemSchema), Event: schema(MapperEventSchema), Resync: schema(ResyncSchema) },
    },
    paths: pathsOf(ROUTES),
  };
}
