import { request } from "node:http";
import { request as httpsRequest } from "node:https";

/** What `httpGet` read: the status and the body as text. */
export interface HttpAnswer {
  status: number;
  body: string;
}

/** Most of a body kept: health answers are small; a larger one is cut, not buffered whole. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * One GET over node:http, for the stack's health and readiness checks. Not `fetch`: the Fetch
 * standard refuses some ports outright (10080, 6000, 6665–6669, … its "bad ports" list), so
 * `PORT=10080 npm start` never saw its gateway ready although the gateway answered. Rejects when
 * nothing answers within `timeoutMs` (a hang bound chosen by the caller) or the connection fails.
 */
export function httpGet(url: string, timeoutMs: number): Promise<HttpAnswer> {
  // An https URL is a gateway with TLS_CERT_FILE: only whether it answers is read here (never a
  // secret, nothing trusted), so its certificate is not checked (it may be self-signed or expired).
  const get = url.startsWith("https:")
    ? (u: string, o: object, cb: Parameters<typeof request>[2]) => httpsRequest(u, { ...o, rejectUnauthorized: false }, cb)
    : request;
  return new Promise((resolve, reject) => {
    const req = get(url, { method: "GET", timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        if (size < MAX_BODY_BYTES) chunks.push(c);
        size += c.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8").slice(0, MAX_BODY_BYTES) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}
