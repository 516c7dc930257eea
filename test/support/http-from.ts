import { request } from "node:http";
import type { CallResult } from "./http.ts";
import { readReply } from "./raw-http.ts";

/**
 * One HTTP call over a real socket bound to `localAddress` (e.g. 127.0.0.2: every 127/8 address
 * is this machine's loopback), so a test can be two different callers. `params` go in a POST
 * form body; `headers` are added (e.g. authorization).
 */
export function callFrom(
  localAddress: string,
  base: string,
  path: string,
  params: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<CallResult & { headers: Record<string, string | string[] | undefined> }> {
  const body = new URLSearchParams(params).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: "POST",
        localAddress,
        headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body), ...headers },
        timeout: 60_000,
      },
      (res) => readReply(res).then(resolve, reject),
    );
    req.on("timeout", () => req.destroy(new Error(`${path}: no answer in 60 s`)));
    req.on("error", reject);
    req.end(body);
  });
}
