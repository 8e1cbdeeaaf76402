/**
 * A loopback stand-in for serve's learned-rules routes (issue 37 §2), in
 * front of a real API server: it answers `GET /v1/rules`,
 * `DELETE /v1/rules/{id}` and `GET …/interactions/{iid}/proposed-rule` with
 * the contract's exact shapes, takes `remember` off an answer (recording it)
 * before passing the answer on, and adds `rule` to the answer's response.
 * Every other request goes through to the real server unchanged. It stands
 * in only until serve has these routes itself.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface StandInRule {
  id: string;
  decision: "approve" | "deny";
  match: string;
  scope: "conversation" | "workspace" | "everywhere";
  kind: "command" | "file";
  addedBy: string;
  addedAt: string;
  fromRequest: string;
  fired: number;
  lastFired: string | null;
}
export interface StandInProposal {
  decision?: "approve" | "deny";
  match: string;
  scope: "conversation" | "workspace" | "everywhere";
  kind: "command" | "file";
  alternatives: string[];
  /** When set, only `?decision=deny` gets the proposal; any other ask gets a 422 with this sentence. */
  allowRefused?: string;
}
export interface RulesStandIn {
  url: string;
  rules: StandInRule[];
  /** Every `remember` an answer carried, with the interaction and the action. */
  remembered: { interactionId: string; action: string; remember: unknown }[];
  revoked: string[];
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startRulesStandIn(options: {
  upstream: string;
  token: string;
  proposals: Record<string, StandInProposal>;
  rules?: StandInRule[];
}): Promise<RulesStandIn> {
  const upstream = new URL(options.upstream);
  const rules = [...(options.rules ?? [])];
  const remembered: RulesStandIn["remembered"] = [];
  const revoked: string[] = [];
  let next = 1;

  const forward = (req: IncomingMessage, res: ServerResponse, body?: string, edit?: (out: Record<string, unknown>) => void) => {
    const headers = { ...req.headers };
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      if (edit === undefined) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      bodyOf(answer).then(
        (text) => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            parsed = {};
          }
          if ((answer.statusCode ?? 500) < 300) edit(parsed);
          json(res, answer.statusCode ?? 502, parsed);
        },
        () => res.destroy(),
      );
    });
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    if (body !== undefined) out.end(body);
    else req.pipe(out);
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname.split("/").map(decodeURIComponent);
    const authorized = req.headers.authorization === `Bearer ${options.token}`;
    const ours = path[1] === "v1" && (path[2] === "rules" || (path[2] === "sessions" && path[4] === "interactions"));
    if (ours && !authorized) return json(res, 401, { title: "Unauthorized", detail: "send Authorization: Bearer TOKEN" });
    if (path[2] === "rules" && path.length === 3 && req.method === "GET") return json(res, 200, { rules });
    if (path[2] === "rules" && path.length === 4 && req.method === "DELETE") {
      const at = rules.findIndex((r) => r.id === path[3]);
      if (at < 0) return json(res, 404, { title: "Not Found", detail: `no learned rule ${path[3]}` });
      const [gone] = rules.splice(at, 1);
      revoked.push(gone!.id);
      return json(res, 200, { revoked: gone });
    }
    if (path[4] === "interactions" && path[6] === "proposed-rule" && req.method === "GET") {
      const proposal = options.proposals[path[5]!];
      if (proposal === undefined) return json(res, 404, { title: "Not Found", detail: "no rule can be proposed for this request" });
      const decision = new URL(req.url ?? "/", "http://x").searchParams.get("decision");
      const { allowRefused, ...shown } = proposal;
      if (allowRefused !== undefined && decision !== "deny") return json(res, 422, { title: "Unprocessable Content", detail: allowRefused });
      return json(res, 200, decision === "deny" ? { decision: "deny", ...shown } : shown);
    }
    if (path[4] === "interactions" && path.length === 6 && req.method === "POST") {
      bodyOf(req).then(
        (text) => {
          const answer = JSON.parse(text) as { action: string; remember?: { scope: StandInRule["scope"]; rule?: string } };
          const { remember, ...rest } = answer;
          if (remember === undefined) return forward(req, res, text);
          remembered.push({ interactionId: path[5]!, action: answer.action, remember });
          forward(req, res, JSON.stringify(rest), (out) => {
            const proposal = options.proposals[path[5]!];
            const rule: StandInRule = {
              id: `r${next++}`,
              decision: answer.action === "approve" ? "approve" : "deny",
              match: remember.rule ?? proposal?.match ?? "",
              scope: remember.scope,
              kind: proposal?.kind ?? "command",
              addedBy: "page",
              addedAt: new Date().toISOString(),
              fromRequest: path[5]!,
              fired: 0,
              lastFired: null,
            };
            rules.push(rule);
            out.rule = { id: rule.id, decision: rule.decision, match: rule.match, scope: rule.scope };
          });
        },
        () => res.destroy(),
      );
      return;
    }
    forward(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    rules,
    remembered,
    revoked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
