import { afterEach, describe, expect, it } from "vitest";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { rawRequest } from "./support/raw-http.js";

let harness: ApiHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(options: Parameters<typeof startApiHarness>[0] = {}): Promise<{ h: ApiHarness; port: number }> {
  harness = await startApiHarness(options);
  return { h: harness, port: Number(new URL(harness.url).port) };
}

const auth = `Authorization: Bearer ${TEST_TOKEN}`;

describe("Host and Origin", () => {
  it("refuses a foreign Host with 403 on every route, the page included (a DNS-rebinding page)", async () => {
    const { h, port } = await start();
    h.addSession("conv-a");
    await h.hub.refresh();
    for (const path of ["/", "/index.html", "/v1/sessions", "/v1/openapi.json", "/v1/sessions/conv-a/pending", "/v1/sessions/conv-a/events"]) {
      const res = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: evil.example:${port}\r\n${auth}`);
      expect(res.status, path).toBe(403);
      expect(JSON.parse(res.body).detail, path).toMatch(/--allow-host/);
      expect(res.body).not.toContain("<title>");
    }
    const post = await rawRequest(
      port,
      `POST /v1/sessions/conv-a/interactions/int_6 HTTP/1.1\r\nHost: evil.example:${port}\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"action":"approve"}`,
    );
    expect(post.status).toBe(403);
    expect(h.sessions.get("conv-a")?.answers).toEqual([]);
  });

  it("answers loopback names and addresses, whatever the port (an SSH tunnel changes it)", async () => {
    const { port } = await start();
    for (const host of [`127.0.0.1:${port}`, "127.0.0.1:9000", `localhost:${port}`, "LOCALHOST", "127.1.2.3:80", "[::1]:7878", "app.localhost:1"]) {
      const res = await rawRequest(port, `GET /v1/sessions HTTP/1.1\r\nHost: ${host}\r\n${auth}`);
      expect(res.status, host).toBe(200);
    }
  });

  it("answers a name given with --allow-host, and the address it listens on", async () => {
    const { port } = await start({ allowHosts: ["workstation.lan"], boundHost: "192.0.2.7" });
    for (const host of ["workstation.lan:7878", "WorkStation.LAN", "192.0.2.7:7878"]) {
      expect((await rawRequest(port, `GET /v1/sessions HTTP/1.1\r\nHost: ${host}\r\n${auth}`)).status, host).toBe(200);
    }
    expect((await rawRequest(port, `GET /v1/sessions HTTP/1.1\r\nHost: other.lan\r\n${auth}`)).status).toBe(403);
  });

  it("refuses a request without Host with 400 and a sentence", async () => {
    const { port } = await start();
    const res = await rawRequest(port, `GET / HTTP/1.0\r\n${auth}`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).detail).toMatch(/Host header/);
  });

  it("refuses a foreign Origin with 403 even with the right token, and takes the server's own origin and the --cors one", async () => {
    const { h, port } = await start({ cors: "https://bot.example" });
    h.addSession("conv-a");
    await h.hub.refresh();
    const host = `127.0.0.1:${port}`;
    const body = '{"action":"approve"}';
    const post = (origin: string) =>
      rawRequest(
        port,
        `POST /v1/sessions/conv-a/interactions/int_6 HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${origin}\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
    for (const origin of ["https://evil.example", "http://evil.example:80", "null", `http://localhost:${port}`]) {
      const res = await post(origin);
      expect(res.status, origin).toBe(403);
      expect(JSON.parse(res.body).detail, origin).toMatch(/another origin/);
    }
    expect((await rawRequest(port, `GET / HTTP/1.1\r\nHost: ${host}\r\nOrigin: https://evil.example`)).status).toBe(403);
    expect(h.sessions.get("conv-a")?.answers).toEqual([]);
    expect((await post(`http://${host}`)).status).toBe(200);
    expect((await rawRequest(port, `GET /v1/sessions HTTP/1.1\r\nHost: ${host}\r\nOrigin: https://bot.example\r\n${auth}`)).status).toBe(200);
  });
});
