import http from "node:http";
import https from "node:https";
import {
  type AddressPolicy,
  type CallbackFailureKind,
  classifyHttpStatus,
  classifyNetworkError,
  isDeliveredStatus,
  TIMED_OUT,
  withTimeout,
} from "@evb/domain";
import { EXCERPT_BYTES, excerptOf } from "@evb/storage";
import { type HostLookup, isIpLiteral, parseCallbackUrl, resolveCallbackHost, systemLookup } from "@evb/subscriptions";

/**
 * `excerpt`: the start of the answer's body (at most 256 bytes), null when there was none.
 * `failure`: what kind of failure it was (packages/domain/src/http-failure.ts), for the retry
 * policy; `error` is the text for the logs and the attempt log.
 */
export type PostResult =
  | { delivered: true; status: number; excerpt: string | null }
  | {
      delivered: false;
      failure: CallbackFailureKind;
      status: number | null;
      retryAfter: string | undefined;
      error: string;
      excerpt: string | null;
    };

/** Options of one attempt. */
export interface PostOptions {
  /** Aborts the attempt (the job lost its lock): the request is destroyed at once. */
  signal?: AbortSignal;
  /**
   * Called once the whole request has been handed to the socket (or the attempt ended before
   * that): the next event of the subscription may be sent from then on (the in-flight window).
   */
  onWritten?: () => void;
}

/**
 * Most answer-body bytes read. A receiver's body means nothing to delivery (the status line
 * decides); reading a short body to its end lets the connection be reused, and past this the
 * connection is dropped instead of reading on.
 */
const BODY_READ_BYTES = 4096;

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

  /** One attempt; see PostOptions. */
  async post(rawUrl: string, body: string, headers: Record<string, string>, options: PostOptions = {}): Promise<PostResult> {
    let told = false;
    const written = () => {
      if (told) return;
      told = true;
      options.onWritten?.();
    };
    try {
      return await this.attempt(rawUrl, body, headers, options.signal, written);
    } finally {
      written();
    }
  }

  private async attempt(
    rawUrl: string,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    onWritten: () => void,
  ): Promise<PostResult> {
    const fail = (
      failure: CallbackFailureKind,
      error: string,
      status: number | null = null,
      retryAfter?: string,
      excerpt: string | null = null,
    ): PostResult => ({ delivered: false, failure, status, retryAfter, error, excerpt });
    const target = parseCallbackUrl(rawUrl);
    if (!target) return fail("NOT_ALLOWED", "not an http(s) URL");
    const started = Date.now();
    // What the resolver said, to tell a name that does not resolve from an address the policy refuses.
    const base = this.opts.lookup ?? systemLookup;
    let lookupError: unknown;
    let answered = -1;
    const lookup: HostLookup = async (host) => {
      try {
        const found = await base(host);
        answered = found.length;
        return found;
      } catch (err) {
        lookupError = err ?? new Error("lookup failed");
        throw err;
      }
    };
    // The lookup is raced against the attempt's deadline: a resolver that never answers must not
    // hold this subscription's slot past DELIVERY_TIMEOUT_MS.
    const resolved = await withTimeout(resolveCallbackHost(target.host, this.opts.policy, lookup), this.opts.timeoutMs);
    if (resolved === TIMED_OUT) return fail("TIMEOUT", `timed out resolving ${target.host} after ${this.opts.timeoutMs} ms`);
    if (!resolved.ok) {
      const kind = lookupError !== undefined ? classifyNetworkError(lookupError) : answered === 0 ? "DNS" : "NOT_ALLOWED";
      return fail(kind === "OTHER" ? "DNS" : kind, resolved.reason);
    }
    const address = resolved.addresses[0]?.address as string;
    const left = this.opts.timeoutMs - (Date.now() - started);
    if (left <= 0) return fail("TIMEOUT", "timed out resolving the host");
    if (signal?.aborted) return fail("OTHER", "aborted before sending");
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
      const abort = () => {
        cutOff = "OTHER";
        req.destroy(new Error("aborted: the delivery job lost its lock"));
      };
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
      // Set when this transport cut the attempt off itself: the error that follows is that, whatever its code.
      let cutOff: CallbackFailureKind | null = null;
      const timer = setTimeout(() => {
        cutOff = "TIMEOUT";
        req.destroy(new Error(`timed out after ${this.opts.timeoutMs} ms`));
      }, left);
      signal?.addEventListener("abort", abort, { once: true });
      // Set once the status line is in: from then on the attempt's result is that answer.
      let answer: (() => PostResult) | null = null;
      req.once("response", (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers["retry-after"];
        // The status line decides: a 2xx is delivered whatever its body does afterwards (broken,
        // endless or huge), anything else failed. The body is read for an excerpt and, when short,
        // to its end so the connection can be reused; a longer one, or one still unfinished when
        // the attempt's time is up, is cut off with its connection.
        const chunks: Buffer[] = [];
        let read = 0;
        const answered = (): PostResult => {
          const excerpt = excerptOf(Buffer.concat(chunks));
          return isDeliveredStatus(status)
            ? { delivered: true, status, excerpt }
            : fail(classifyHttpStatus(status), `HTTP ${status}`, status, retryAfter, excerpt);
        };
        answer = answered;
        res.on("data", (chunk: Buffer) => {
          if (read < EXCERPT_BYTES) chunks.push(chunk.subarray(0, EXCERPT_BYTES - read));
          read += chunk.length;
          if (read > BODY_READ_BYTES) {
            finish(answered());
            req.destroy();
          }
        });
        res.once("end", () => finish(answered()));
        res.once("error", () => finish(answered()));
        res.once("close", () => finish(answered()));
      });
      req.once("error", (err: NodeJS.ErrnoException) =>
        finish(answer ? answer() : fail(cutOff ?? classifyNetworkError(err), `${address}:${target.port}: ${err.code ?? err.message}`)),
      );
      req.once("finish", onWritten);
      req.end(payload);
    });
  }

  close(): void {
    this.agents["http:"].destroy();
    this.agents["https:"].destroy();
  }
}
