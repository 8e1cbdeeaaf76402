/**
 * A request's JSON body, bounded (2 MiB; 413 above) and checked against a
 * zod schema (400 naming the field that does not fit).
 */
import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { HttpProblem } from "./http-problem.js";

const MAX_BODY_BYTES = 2 * 1024 * 1024;

export function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > MAX_BODY_BYTES) return Promise.reject(new HttpProblem(413, "Content Too Large", `the body is over ${MAX_BODY_BYTES} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpProblem(413, "Content Too Large", `the body is over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", reject);
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new HttpProblem(400, "Bad Request", "the body is not JSON"));
      }
    });
  });
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
  throw new HttpProblem(400, "Bad Request", `${where}: ${issue?.message ?? "invalid"}`);
}
