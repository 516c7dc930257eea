import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What a readiness check answers: `ok`, the `reason` when not, and any facts worth showing. */
export type Readiness = { ok: boolean; reason?: string } & Record<string, unknown>;

/** A service's own verdict on whether it is alive; not alive only when it has given up (a fatal stop). */
export type Liveness = () => { ok: boolean; reason?: string };

/** An extra GET path served next to the health endpoints (e.g. `/metrics`). */
export type Route = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface HealthOptions {
  /**
   * Readiness: whether the service can do its work now. It should only read what background
   * checks found (`BackgroundCheck`), never wait on the network. A throw or a hang counts as not ready.
   */
  check: () => Readiness | Promise<Readiness>;
  /** Liveness beyond "the event loop answers"; default: alive. */
  live?: Liveness;
  /** Longest a readiness check may take before it is answered as not ready, ms: a probe gets its answer within a second. Default 900. */
  checkTimeoutMs?: number;
}

/** The paths every service answers: liveness, readiness, and /health (readiness, for existing checks). */
export const HEALTH_PATHS = ["/livez", "/readyz", "/health"] as const;

function send(res: ServerResponse, status: number, body: Record<string, unknown>, head: boolean): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(head ? undefined : text);
}

async function readiness(opts: HealthOptions): Promise<Readiness> {
  const timeoutMs = opts.checkTimeoutMs ?? 900;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: `the readiness check did not answer within ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    const body = await Promise.race([
      Promise.resolve()
        .then(() => opts.check())
        .catch((err: unknown): Readiness => ({ ok: false, reason: `the readiness check failed: ${String(err)}` })),
      late,
    ]);
    return body.ok || body.reason ? body : { ...body, reason: "not ready" };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Answers `/livez`, `/readyz` and `/health` on a request, or returns false for another path.
 * - `/livez`: 200 while the process answers, unless `live()` says the service gave up (503):
 *   restart me.
 * - `/readyz` and `/health`: 200 when `check()` is ok, else 503 with its `reason`: send me no
 *   work yet. A failing or hung check is reported, never thrown.
 * Usable from a bare node:http server and from express alike.
 */
export function answerHealth(opts: HealthOptions, req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
  const path = (req.url ?? "/").split("?")[0];
  if (!(HEALTH_PATHS as readonly string[]).includes(path ?? "")) return false;
  const head = req.method === "HEAD";
  if (req.method !== "GET" && !head) {
    res.writeHead(405, { allow: "GET, HEAD" }).end();
    return true;
  }
  if (path === "/livez") {
    const live = opts.live?.() ?? { ok: true };
    send(res, live.ok ? 200 : 503, { status: live.ok ? "alive" : "dead", ...live }, head);
    return true;
  }
  return readiness(opts).then((body) => {
    send(res, body.ok ? 200 : 503, { status: body.ok ? "ok" : "not ready", ...body }, head);
    return true;
  });
}

export interface HealthServer {
  /** The `/health` URL (readiness), as services log it. */
  url: string;
  /** e.g. http://127.0.0.1:9100 */
  origin: string;
  port: number;
  close(): void;
}

/**
 * The health endpoints (`/livez`, `/readyz`, `/health`) for services without an HTTP interface of
 * their own, plus any extra GET `routes`; every other path is 404.
 */
export async function serveHealth(
  opts: HealthOptions & { host: string; port: number; routes?: Record<string, Route> },
): Promise<HealthServer> {
  const server = createServer(async (req, res) => {
    try {
      if (await answerHealth(opts, req, res)) return;
      const route = opts.routes?.[(req.url ?? "/").split("?")[0] ?? ""];
      if (route && (req.method === "GET" || req.method === "HEAD")) {
        await route(req, res);
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const origin = `http://${host}:${port}`;
  return { url: `${origin}/health`, origin, port, close: () => server.close() };
}
