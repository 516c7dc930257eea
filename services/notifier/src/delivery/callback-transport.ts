import http from "node:http";
import https from "node:https";
import type { AddressPolicy } from "@evb/domain";
import {
  type HostLookup,
  isIpLiteral,
  parseCallbackUrl,
  resolveCallbackHost,
  systemLookup,
  TIMED_OUT,
  withTimeout,
} from "@evb/subscriptions";

export type PostResult =
  | { delivered: true; status: number }
  | { delivered: false; status: number | null; retryAfter: string | undefined; error: string };

export interface CallbackTransportOptions {
  policy: AddressPolicy;
  /** One attempt, resolution + connect + response, ms. */
  timeoutMs: number;
  lookup?: HostLookup;
  userAgent: string;
}

/**
 * POSTs one callback. The host is resolved and checked against the outbound policy on every
 * attempt, and the request dials the checked address itself (Host header and TLS name stay the
 * URL's), so DNS cannot steer a delivery to an internal address after the check. Redirects are
 * not followed. The timeout covers everything from resolution to the end of the response.
 */
export class CallbackTransport {
  private readonly opts: CallbackTransportOptions;
  // No per-address socket limit: each in-flight attempt (at most one per subscription, at most
  // DELIVERY_CONCURRENCY in all) gets its own connection at once. A limit (it was 16) made the
  // healthy subscriptions of a host queue for a socket behind its slow ones, with their attempt
  // timers already running. Idle connections are still kept for reuse.
  private readonly agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 64, timeout: 60_000 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 64, timeout: 60_000 }),
  };

  constructor(opts: CallbackTransportOptions) {
    this.opts = opts;
  }

  /** `signal` aborts the attempt (the job lost its lock): the request is destroyed at once. */
  async post(rawUrl: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<PostResult> {
    const fail = (error: string, status: number | null = null, retryAfter?: string): PostResult => ({
      delivered: false,
      status,
      retryAfter,
      error,
    });
    const target = parseCallbackUrl(rawUrl);
    if (!target) return fail("not an http(s) URL");
    const started = Date.now();
    // The lookup is raced against the attempt's deadline: a resolver that never answers must not
    // hold this subscription's slot past DELIVERY_TIMEOUT_MS.
    const resolved = await withTimeout(
      resolveCallbackHost(target.host, this.opts.policy, this.opts.lookup ?? systemLookup),
      this.opts.timeoutMs,
    );
    if (resolved === TIMED_OUT) return fail(`timed out resolving ${target.host} after ${this.opts.timeoutMs} ms`);
    if (!resolved.ok) return fail(resolved.reason);
    const address = resolved.addresses[0]?.address as string;
    const left = this.opts.timeoutMs - (Date.now() - started);
    if (left <= 0) return fail("timed out resolving the host");
    if (signal?.aborted) return fail("aborted before sending");
    const mod = target.protocol === "https:" ? https : http;
    const payload = Buffer.from(body, "utf8");
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (r: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", abort);
        resolve(r);
      };
      const abort = () => req.destroy(new Error("aborted: the delivery job lost its lock"));
      const req = mod.request({
        host: address,
        port: target.port,
        method: "POST",
        path: `${target.url.pathname}${target.url.search}`,
        servername: target.protocol === "https:" && !isIpLiteral(target.host) ? target.host : undefined,
        agent: this.agents[target.protocol],
        headers: {
          host: target.url.host,
          "content-type": "application/json",
          "content-length": String(payload.length),
          "user-agent": this.opts.userAgent,
          ...headers,
        },
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`timed out after ${this.opts.timeoutMs} ms`));
      }, left);
      signal?.addEventListener("abort", abort, { once: true });
      req.once("response", (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers["retry-after"];
        // The body is ignored, but read to the end so the connection can be reused.
        res.resume();
        res.once("end", () => {
          finish(status >= 200 && status <= 299 ? { delivered: true, status } : fail(`HTTP ${status}`, status, retryAfter));
        });
        res.once("error", (err) => finish(fail(err.message, status, retryAfter)));
        res.once("close", () => finish(fail("connection closed before the response ended", status, retryAfter)));
      });
      req.once("error", (err: NodeJS.ErrnoException) => finish(fail(`${address}:${target.port}: ${err.code ?? err.message}`)));
      req.end(payload);
    });
  }

  close(): void {
    this.agents["http:"].destroy();
    this.agents["https:"].destroy();
  }
}
