import { randomUUID } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { withRequestId } from "@evb/runtime";
import { nameServerSpan } from "@evb/telemetry";
import type { Logger, Mount } from "@evb/domain";
import type { GatewayMetrics } from "./gateway-metrics.ts";

/** An X-Request-Id we take as it is: short, and only characters that are safe in a log line and a header. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@+=/-]{1,128}$/;

export interface RequestObserverOptions {
  mounts: readonly Mount[];
  /** Operation paths (e.g. `rest/publish`) each variant serves; anything else is labelled `unknown`. */
  operations: readonly { path: string; variants: readonly string[] }[];
  metrics: GatewayMetrics;
  logger: Logger;
  /** One info line per request (ACCESS_LOG). */
  accessLog: boolean;
}

/** The request's id: the caller's X-Request-Id when sane, a fresh UUID otherwise. */
export function requestIdOf(header: string | undefined): string {
  return header !== undefined && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * What a reply's first bytes say about its result: the broker code of an envelope or error
 * (`{"code":…`), a publish's status (`{"status":"SUCCESS"…`), `http_<status>` for an answer
 * that is not HTTP 200, and "0" for bare success data. Looks at the start of the body only, so
 * it costs nothing on large replies.
 */
export function resultOf(status: number, head: string): string {
  if (status !== 200) return `http_${status}`;
  const code = /^\{"code":(-?\d{1,9})[,}]/.exec(head);
  if (code) return code[1] as string;
  const sent = /^\{"status":"(SUCCESS|TIMEOUT|ERROR)"/.exec(head);
  if (sent) return sent[1] as string;
  return "0";
}

/** The variant and operation labels of a path (the mounts' rules: exact context path, ";…" segment parameters ignored). */
export function routeOf(
  path: string,
  mounts: readonly Mount[],
  known: ReadonlyMap<string, ReadonlySet<string>>,
): { variant: string; operation: string } {
  for (const m of mounts) {
    if (path !== m.path && !path.startsWith(`${m.path}/`)) continue;
    const op = path
      .slice(m.path.length)
      .replace(/;[^/]*/g, "")
      .replace(/^\/+/, "")
      .replace(/\/$/, "");
    // The JSON-RPC endpoint of every mount is an operation label of its own (its calls are not told apart).
    return { variant: m.variant, operation: op === "jsonrpc" || known.get(m.variant)?.has(op) ? op : "unknown" };
  }
  if (path === "/health" || path === "/metrics") return { variant: "none", operation: path.slice(1) };
  return { variant: "none", operation: "unknown" };
}

/**
 * First middleware of the gateway: gives every request an id (returned in X-Request-Id, and on
 * every log line the request causes), counts it by variant, operation and result, times it,
 * and writes the access log line once the answer is sent.
 */
export function requestObserver(o: RequestObserverOptions): RequestHandler {
  const known = new Map<string, Set<string>>();
  for (const m of o.mounts)
    known.set(m.variant, new Set(o.operations.filter((op) => op.variants.includes(m.variant)).map((op) => op.path)));
  // Labels per path, remembered: a client calls the same few paths over and over. Bounded,
  // since a path is whatever the client sends.
  const routes = new Map<string, { variant: string; operation: string }>();
  const routeOfPath = (path: string) => {
    let route = routes.get(path);
    if (!route) {
      route = routeOf(path, o.mounts, known);
      if (routes.size >= 1000) routes.clear();
      routes.set(path, route);
    }
    return route;
  };
  const pathOf = (url: string) => {
    const q = url.indexOf("?");
    return (q < 0 ? url : url.slice(0, q)).slice(0, 512);
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const path = pathOf(req.originalUrl);
    const route = routeOfPath(path);
    if (route.operation !== "unknown") {
      const mount = o.mounts.find((m) => path === m.path || path.startsWith(`${m.path}/`));
      nameServerSpan(req.method, `${mount?.path ?? ""}/${route.operation}`);
    }
    const header = req.headers["x-request-id"];
    const requestId = requestIdOf(typeof header === "string" ? header : undefined);
    res.setHeader("X-Request-Id", requestId);
    let head = "";
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const body = args[0];
      if (Buffer.isBuffer(body)) head = body.subarray(0, 48).toString("latin1");
      else if (typeof body === "string") head = body.slice(0, 48);
      return end(...args);
    }) as Response["end"];
    res.once("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const { variant, operation } = route;
      const result = resultOf(res.statusCode, head);
      o.metrics.requests.inc({ variant, operation, result });
      o.metrics.requestSeconds.observe({ variant, operation }, seconds);
      if (!o.accessLog) return;
      const line = {
        requestId,
        method: req.method,
        path,
        variant,
        operation,
        result,
        status: res.statusCode,
        durationMs: Math.round(seconds * 1e4) / 10,
      };
      // Scrapes and health checks come every few seconds: only at debug, or they drown the requests.
      if (variant === "none" && operation !== "unknown") o.logger.debug(line, "request");
      else o.logger.info(line, "request");
    });
    withRequestId(requestId, next);
  };
}
