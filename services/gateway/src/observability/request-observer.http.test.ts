import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { currentRequestId } from "@evb/runtime";
import type { Logger } from "@evb/domain";
import { GatewayMetrics } from "./gateway-metrics.ts";
import { requestObserver } from "./request-observer.ts";

/** A logger that keeps its lines. */
function recording(): Logger & { lines: { level: string; obj: Record<string, unknown>; msg?: string }[] } {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => (obj: object | string, msg?: string) => {
    lines.push(typeof obj === "string" ? { level, obj: {}, msg: obj } : { level, obj: obj as Record<string, unknown>, msg });
  };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

let server: ReturnType<express.Express["listen"]> | undefined;
afterEach(() => server?.close());

async function serve(accessLog: boolean) {
  const logger = recording();
  const metrics = new GatewayMetrics({ waiting: () => 0, cap: () => 1 });
  const seen: (string | undefined)[] = [];
  const app = express();
  app.use(
    requestObserver({
      mounts: [{ variant: "M", path: "/event-m" }],
      operations: [{ path: "rest/state", variants: ["M"] }],
      metrics,
      logger,
      accessLog,
    }),
  );
  app.get("/event-m/rest/state", async (_req, res) => {
    await new Promise((r) => setTimeout(r, 5));
    seen.push(currentRequestId());
    res.end('{"code":100101,"message":"topic name is blank"}');
  });
  server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server?.once("listening", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, logger, metrics, seen };
}

describe("request observer over a socket", () => {
  it("logs one line per request with the request id, which the handler's async work also sees", async () => {
    const { base, logger, metrics, seen } = await serve(true);
    const res = await fetch(`${base}/event-m/rest/state?topic=`, { headers: { "x-request-id": "abc-1" } });
    await res.text();
    expect(res.headers.get("x-request-id")).toBe("abc-1");
    expect(seen).toEqual(["abc-1"]);
    await expect.poll(() => logger.lines.length).toBe(1);
    expect(logger.lines[0]).toMatchObject({
      level: "info",
      msg: "request",
      obj: {
        requestId: "abc-1",
        method: "GET",
        path: "/event-m/rest/state",
        variant: "M",
        operation: "rest/state",
        result: "100101",
        status: 200,
      },
    });
    const text = await metrics.metrics.registry.metrics();
    expect(text).toMatch(/evb_http_requests_total\{variant="M",operation="rest\/state",result="100101",service="gateway"\} 1/);
  });

  it("ACCESS_LOG=false: no access line, but the id is still returned and counted", async () => {
    const { base, logger, metrics } = await serve(false);
    const res = await fetch(`${base}/nowhere`);
    await res.text();
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 50));
    expect(logger.lines).toEqual([]);
    expect(await metrics.metrics.registry.metrics()).toMatch(
      /evb_http_requests_total\{variant="none",operation="unknown",result="http_404",service="gateway"\} 1/,
    );
  });
});
