/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod contract
 * (`contract.ts`). `docs/openapi.json` is this document, committed; a test
 * fails when the two differ.
 */
import { z } from "zod";
import {
  AnswerResultSchema,
  InteractionActionSchema,
  InterruptResultSchema,
  MapperEventSchema,
  PendingResponseSchema,
  ProblemSchema,
  SessionsResponseSchema,
  TurnRequestSchema,
  TurnResultSchema,
} from "./contract.js";

const schema = (s: z.ZodType, io: "input" | "output" = "output"): unknown => {
  const out = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out["$schema"];
  return out;
};

const json = (s: z.ZodType, io: "input" | "output" = "output") => ({ "application/json": { schema: schema(s, io) } });
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });
const conversationId = { name: "conversationId", in: "path", required: true, schema: { type: "string" } };

export function buildOpenApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "agy-bridge HTTP API",
      version,
      description: "Supervise attended agy sessions over HTTP: list sessions, follow events (SSE), answer approvals and questions, type turns, interrupt. Every /v1 route requires Authorization: Bearer <token>.",
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Problem: schema(ProblemSchema), Event: schema(MapperEventSchema) },
    },
    paths: {
      "/v1/sessions": {
        get: {
          summary: "Every supervised conversation on this machine",
          responses: { "200": { description: "The sessions", content: json(SessionsResponseSchema) }, "401": problem("No or wrong bearer token"), "429": problem("Too many failed authentications") },
        },
      },
      "/v1/sessions/{conversationId}/events": {
        get: {
          summary: "The conversation's events: first everything so far, oldest first, then live (Server-Sent Events)",
          description: "Each message has `id:` (strictly increasing per conversation), `event:` (the event type) and `data:` (the event JSON, see components.schemas.Event). Send `Last-Event-ID` to resume after that id. A comment arrives at least every 15 s.",
          parameters: [conversationId, { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string", pattern: "^[0-9]+$" } }],
          responses: { "200": { description: "An event stream", content: { "text/event-stream": { schema: { type: "string" } } } }, "400": problem("Bad Last-Event-ID"), "401": problem("No or wrong bearer token"), "404": problem("Unknown conversation") },
        },
      },
      "/v1/sessions/{conversationId}/pending": {
        get: {
          summary: "The open interaction_requested events of the conversation",
          parameters: [conversationId],
          responses: { "200": { description: "Pending approvals and questions", content: json(PendingResponseSchema) }, "401": problem("No or wrong bearer token"), "404": problem("Unknown conversation") },
        },
      },
      "/v1/sessions/{conversationId}/interactions/{interactionId}": {
        post: {
          summary: "Approve, deny or answer a pending interaction",
          parameters: [conversationId, { name: "interactionId", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { required: true, content: json(InteractionActionSchema, "input") },
          responses: {
            "200": { description: "Delivered to the waiting step", content: json(AnswerResultSchema) },
            "400": problem("The body does not match the schema"),
            "401": problem("No or wrong bearer token"),
            "404": problem("Unknown conversation or interaction (`result: not_found`)"),
            "409": problem("`result` is `already_resolved` or `timed_out`"),
          },
        },
      },
      "/v1/sessions/{conversationId}/turns": {
        post: {
          summary: "Type a user turn into the agy TUI",
          parameters: [conversationId],
          requestBody: { required: true, content: json(TurnRequestSchema, "input") },
          responses: { "200": { description: "The delivery result: delivered, unverified or failed, with the reason", content: json(TurnResultSchema) }, "400": problem("The body does not match the schema"), "401": problem("No or wrong bearer token"), "404": problem("Unknown conversation") },
        },
      },
      "/v1/sessions/{conversationId}/interrupt": {
        post: {
          summary: "Interrupt the turn in progress (cancel while running, deny while waiting)",
          parameters: [conversationId],
          responses: { "200": { description: "What was done", content: json(InterruptResultSchema) }, "401": problem("No or wrong bearer token"), "404": problem("Unknown conversation") },
        },
      },
      "/v1/openapi.json": {
        get: { summary: "This document", responses: { "200": { description: "OpenAPI 3.1" }, "401": problem("No or wrong bearer token") } },
      },
    },
  };
}
