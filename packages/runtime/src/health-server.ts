import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HealthServer {
  url: string;
  port: number;
  close(): void;
}

/**
 * `GET /health` for services without an HTTP interface of their own: 200 with `check()`'s body
 * when it reports ok, 503 otherwise (a failing check is reported, never thrown).
 */
export async function serveHealth(opts: {
  host: string;
  port: number;
  check: () => Promise<{ ok: boolean } & Record<string, unknown>>;
  /** Extra GET paths (e.g. `/metrics`), served beside `/health`. */
  routes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void | Promise<void>>;
}): Promise<HealthServer> {
  const server = createServer(async (req, res) => {
    const route = req.method === "GET" ? opts.routes?.[req.url ?? ""] : undefined;
    if (route) {
      await route(req, res);
      return;
    }
    if (req.url !== "/health") {
      res.writeHead(404).end();
      return;
    }
    const body = await opts.check().catch((err: unknown) => ({ ok: false, error: String(err) }));
    res.writeHead(body.ok ? 200 : 503, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: body.ok ? "ok" : "degraded", ...body }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  return { url: `http://${host}:${port}/health`, port, close: () => server.close() };
}
