/**
 * The 20 listeners of `discovery.bench.ts`, run in their own process as agy's
 * would be (so their TLS work does not share the measuring process's
 * thread). Prints one JSON line with the ports and the conversation to find,
 * then serves until its stdin closes.
 */
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { createAgyRpcClient } from "../src/rpc/client.js";
import { createSelfSignedCertificate } from "../src/sim/server/certificate.js";
import { startSimServer } from "../src/sim/index.js";

const slowMs = Number(process.argv[2] ?? 100);

async function listening(server: net.Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  return (server.address() as AddressInfo).port;
}

function slowAgy(req: http.IncomingMessage, res: http.ServerResponse): void {
  req.resume();
  req.on("end", () =>
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(req.url?.endsWith("/GetAllCascadeTrajectories") === true ? '{"trajectorySummaries":{}}' : "{}");
    }, slowMs),
  );
}

const sims = await Promise.all([0, 1, 2, 3].map(() => startSimServer({ speed: 0 })));
const certificate = await createSelfSignedCertificate();
const slow = [
  https.createServer({ cert: certificate.cert, key: certificate.key }, slowAgy),
  https.createServer({ cert: certificate.cert, key: certificate.key }, slowAgy),
  http.createServer(slowAgy),
  http.createServer(slowAgy),
];
const notAgy = [0, 1, 2, 3].map(() => http.createServer((_req, res) => res.writeHead(404).end()));
const slowPorts = await Promise.all(slow.map(listening));
const notAgyPorts = await Promise.all(notAgy.map(listening));
const deadPorts = await Promise.all(
  [0, 1, 2, 3].map(async () => {
    const server = net.createServer();
    const port = await listening(server);
    await new Promise((r) => server.close(r));
    return port;
  }),
);
const owner = sims[2]!;
const client = createAgyRpcClient({ baseUrl: owner.tlsUrl });
const conversationId = String((await client.startCascade({})).cascadeId);
await client.close();

process.stdout.write(
  `${JSON.stringify({ sims: sims.map((s) => [s.tlsPort, s.plainPort]), slowPorts, notAgyPorts, deadPorts, ownerTlsPort: owner.tlsPort, conversationId })}\n`,
);
process.stdin.resume();
process.stdin.on("end", () => {
  void Promise.all(sims.map((s) => s.close())).finally(() => process.exit(0));
});
