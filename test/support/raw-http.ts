import { request } from "node:http";
import type { CallResult } from "./http.ts";

export interface RawRequest {
  method?: string;
  /** Sent verbatim: nothing re-encodes or normalises it (malformed percent-encoding stays malformed). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/**
 * One HTTP request over a real socket with full control of method, path, headers and body
 * bytes, for the protocol edge cases `call()` deliberately cannot produce.
 */
export function rawCall(base: string, req: RawRequest): Promise<CallResult> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? "GET",
        path: req.path,
        headers: { ...(req.body !== undefined ? { "content-length": String(Buffer.byteLength(req.body)) } : {}), ...req.headers },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text, json });
        });
        res.on("error", reject);
      },
    );
    r.on("timeout", () => r.destroy(new Error(`no answer to ${req.method ?? "GET"} ${req.path} within 30 s`)));
    r.on("error", reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}
