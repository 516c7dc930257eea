import { afterEach, describe, expect, it } from "vitest";
import { type HealthServer, type Readiness, serveHealth } from "./health-server.ts";

let server: HealthServer | undefined;
afterEach(() => server?.close());

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> | string }> {
  const res = await fetch(`${server?.origin}${path}`);
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: res.status, body: text };
  }
}

describe("serveHealth", () => {
  it("splits liveness from readiness: not ready is 503 with the reason, while /livez stays 200", async () => {
    let ready: Readiness = { ok: false, reason: "no live indexer for group 2" };
    server = await serveHealth({ host: "127.0.0.1", port: 0, check: async () => ready });
    expect(await get("/livez")).toEqual({ status: 200, body: { status: "alive", ok: true } });
    for (const path of ["/readyz", "/health"])
      expect(await get(path)).toEqual({ status: 503, body: { status: "not ready", ok: false, reason: "no live indexer for group 2" } });
    ready = { ok: true, sealedBlocks: 3 };
    expect(await get("/readyz")).toEqual({ status: 200, body: { status: "ok", ok: true, sealedBlocks: 3 } });
  });

  it("answers a throwing or hung check as not ready, with a reason", async () => {
    server = await serveHealth({ host: "127.0.0.1", port: 0, check: () => Promise.reject(new Error("boom")) });
    expect(await get("/readyz")).toMatchObject({ status: 503, body: { ok: false, reason: expect.stringContaining("boom") } });
    server.close();
    server = await serveHealth({ host: "127.0.0.1", port: 0, checkTimeoutMs: 50, check: () => new Promise(() => {}) });
    expect(await get("/readyz")).toMatchObject({
      status: 503,
      body: { ok: false, reason: "the readiness check did not answer within 50 ms" },
    });
    expect((await get("/livez")).status).toBe(200);
  });

  it("answers a check that only reads what background checks found, without waiting", async () => {
    server = await serveHealth({ host: "127.0.0.1", port: 0, check: () => ({ ok: false, reason: "Postgres: checking (no answer yet)" }) });
    expect(await get("/readyz")).toMatchObject({ status: 503, body: { reason: "Postgres: checking (no answer yet)" } });
  });

  it("gives a not-ready answer without a reason one anyway", async () => {
    server = await serveHealth({ host: "127.0.0.1", port: 0, check: async () => ({ ok: false }) });
    expect(await get("/readyz")).toMatchObject({ status: 503, body: { reason: "not ready" } });
  });

  it("is dead on /livez once the service says so", async () => {
    server = await serveHealth({
      host: "127.0.0.1",
      port: 0,
      check: async () => ({ ok: true }),
      live: () => ({ ok: false, reason: "delivery worker: run loop died" }),
    });
    expect(await get("/livez")).toEqual({ status: 503, body: { status: "dead", ok: false, reason: "delivery worker: run loop died" } });
  });

  it("serves extra routes, and 404 elsewhere", async () => {
    server = await serveHealth({
      host: "127.0.0.1",
      port: 0,
      check: async () => ({ ok: true }),
      routes: { "/metrics": (_req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("up 1\n") },
    });
    expect(await get("/metrics")).toEqual({ status: 200, body: "up 1\n" });
    expect((await get("/nope")).status).toBe(404);
    expect(server.url).toBe(`${server.origin}/health`);
  });
});
