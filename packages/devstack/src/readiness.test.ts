import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenOnBlockedPort } from "../../../test/support/blocked-port.ts";
import { readiness, untilReady } from "./readiness.ts";

// Issue 20: `PORT=10080 npm start` never became ready, because its readiness checks used fetch,
// which refuses the Fetch standard's bad ports. The service here listens on one of them.
describe("readiness and untilReady, on a port fetch refuses", () => {
  let ready = false;
  const server = createServer((req, res) => {
    if (req.url !== "/readyz") return void res.writeHead(404).end();
    if (ready) return void res.writeHead(200).end("{}");
    res.writeHead(503, { "content-type": "application/json" }).end('{"reason":"Kafka: not reachable"}');
  });
  let origin = "";
  beforeAll(async () => {
    origin = `http://127.0.0.1:${await listenOnBlockedPort(server)}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("reads the reason a service gives, then its readiness", async () => {
    ready = false;
    expect(await readiness(origin)).toEqual({ ok: false, reason: "Kafka: not reachable" });
    ready = true;
    expect(await readiness(origin)).toEqual({ ok: true });
  });

  it("gives the status when the answer carries no reason, and why nothing answered", async () => {
    expect(await readiness(`${origin}/none`)).toEqual({ ok: false, reason: "HTTP 404" });
    const closed = createServer();
    const port = await new Promise<number>((r) => closed.listen(0, "127.0.0.1", () => r((closed.address() as { port: number }).port)));
    await new Promise((r) => closed.close(r));
    expect((await readiness(`http://127.0.0.1:${port}`)).reason).toMatch(/ECONNREFUSED/);
  });

  it("waits until ready, telling once why a service still is not after its patience", async () => {
    ready = false;
    const told: string[] = [];
    setTimeout(() => {
      ready = true;
    }, 300);
    await untilReady([{ name: "gateway-1", origin }], { stopped: () => false, progress: (m) => told.push(m), patienceMs: 50, pollMs: 20 });
    expect(told).toEqual(["running, but not ready after 0 s (still waiting): gateway-1: Kafka: not reachable"]);
  });

  it("ends the wait when a stop begins", async () => {
    ready = false;
    let stopped = false;
    setTimeout(() => {
      stopped = true;
    }, 100);
    await untilReady([{ name: "gateway-1", origin }], { stopped: () => stopped, progress: () => {}, pollMs: 20 });
    expect(stopped).toBe(true);
  });
});
