import http from "node:http";
import https from "node:https";
import {
  type AddressPolicy,
  type CallbackFailureKind,
  classifyHttpStatus,
  classifyNetworkError,
  isDeliveredStatus,
  TIMED_OUT,
  type WebhookBody,
  withTimeout,
} from "@evb/domain";
import { EXCERPT_BYTES, excerptOf } from "@evb/storage";
import { type HostLookup, isIpLiteral, parseCallbackUrl, resolveCallbackHost, systemLookup } from "@evb/subscriptions";

/**
 * `excerpt`: the start of the answer's body (at most 256 bytes), null when there was none.
 * `failure`: what kind of failure it was (packages/domain/src/http-failure.ts), for the retry
 * policy; `error` is the text for the logs and the attempt log. `traceparent`: the attempt's
 * span, when traced (callback-trace.ts), for an alert the attempt raises.
 */
export type PostResult = (
  | {
      delivered: true;
      status: number;
      excerpt: string | null;
      /** Passed over by the subscription's content filter: no request was made (delivery-window.ts). */
      skipped?: true;
    }
  | {
      delivered: false;
      failure: CallbackFailureKind;
      status: number | null;
      retryAfter: string | undefined;
      error: string;
      excerpt: string | null;
    }
) & { traceparent?: string };

/** Options of one attempt. */
export interface PostOptions {
  /** Aborts the attempt (the job lost its lock): the request is destroyed at once. */
  signal?: AbortSignal;
  /**
   * Called once the next event of the subscription may be sent (the in-flight window): when the
   * whole request has been handed to a kept-alive connection, or else when the attempt ended.
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
  /** Idle connections kept per address for reuse (default 64). */
  idleSockets?: number;
}

/**
 * POSTs one callback. The host is resolved and checked against the outbound policy on every
 * attempt, and the request dials the checked address itself (Host header and TLS name stay the
 * URL's), so DNS cannot steer a delivery to an internal address after the check. Redirects are
 * not followed. The timeout covers everything from resolution to the end of the response.
 */
export class CallbackTransport {
  private readonly opts: CallbackTransportOptions;
  // No per-address socket limit: each in-flight attempt (at most DELIVERY_WINDOW per
  // subscription, DELIVERY_CONCURRENCY subscriptions) gets its own connection at once. A limit
  // (it was 16) made the healthy subscriptions of a host queue for a socket behind its slow ones,
  // with their attempt timers already running. Idle connections are kept for reuse, as many per
  // address as can be in flight: fewer (it was 64) closed most connections of a window after one
  // callback, and the next one paid a new connection (and waited for its answer).
  private readonly agents: { "http:": http.Agent; "https:": https.Agent };

  constructor(opts: CallbackTransportOptions) {
    this.opts = opts;
    const keep = { keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: opts.idleSockets ?? 64, timeout: 60_000 };
    this.agents = { "http:": new http.Agent(keep), "https:": new https.Agent(keep) };
  }

  /** One attempt; see PostOptions. */
  async post(rawUrl: string, body: WebhookBody, headers: Record<string, string>, options: PostOptions = {}): Promise<PostResult> {
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
    body: WebhookBody,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    onWritten: () => void,
  ): Promise<PostResult> {
    const target = parseCallbackUrl(rawUrl);
    if (!target) return failed("NOT_ALLOWED", "not an http(s) URL");
    const started = Date.now();
    const address = await this.resolve(target.host);
    if (typeof address !== "string") return address;
    const left = this.opts.timeoutMs - (Date.now() - started);
    if (left <= 0) return failed("TIMEOUT", "timed out resolving the host");
    if (signal?.aborted) return failed("OTHER", "aborted before sending");
    return this.send(
      { target, address, left, signal, onWritten },
      typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body),
      headers,
    );
  }

  /** The address to dial for `host`, checked against the policy; else the failed attempt. */
  private async resolve(host: string): Promise<string | PostResult> {
    // What the resolver said, to tell a name that does not resolve from an address the policy refuses.
    const base = this.opts.lookup ?? systemLookup;
    let lookupError: unknown;
    let answered = -1;
    const lookup: HostLookup = async (name) => {
      try {
        const found = await base(name);
        answered = found.length;
        return found;
      } catch (err) {
        lookupError = err ?? new Error("lookup failed");
        throw err;
      }
    };
    // The lookup is raced against the attempt's deadline: a resolver that never answers must not
    // hold this subscription's slot past DELIVERY_TIMEOUT_MS.
    const resolved = await withTimeout(resolveCallbackHost(host, this.opts.policy, lookup), this.opts.timeoutMs);
    if (resolved === TIMED_OUT) return failed("TIMEOUT", `timed out resolving ${host} after ${this.opts.timeoutMs} ms`);
    if (!resolved.ok) {
      const kind = lookupError !== undefined ? classifyNetworkError(lookupError) : answered === 0 ? "DNS" : "NOT_ALLOWED";
      return failed(kind === "OTHER" ? "DNS" : kind, resolved.reason);
    }
    return resolved.addresses[0]?.address as string;
  }

  /** POSTs `payload` to the checked `address` within `left` ms. */
  private send(to: Dial, payload: Buffer, headers: Record<string, string>): Promise<PostResult> {
    const { target, address, signal } = to;
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
      const req = (target.protocol === "https:" ? https : http).request({
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
      }, to.left);
      signal?.addEventListener("abort", abort, { once: true });
      // Set once the status line is in: from then on the attempt's result is that answer.
      let answer: (() => PostResult) | null = null;
      req.once("response", (res) => {
        answer = readAnswer(res, finish, () => req.destroy());
      });
      req.once("error", (err: NodeJS.ErrnoException) =>
        finish(answer ? answer() : failed(cutOff ?? classifyNetworkError(err), `${address}:${target.port}: ${err.code ?? err.message}`)),
      );
      // Only a request on a kept-alive connection lets the next one go once it is written: a
      // request on a new connection could be read by the receiver after a later one on an open
      // connection (the receiver accepts the new connection first), so the next waits for its
      // answer (post() calls onWritten when the attempt ends).
      req.once("finish", () => {
        if (req.reusedSocket) to.onWritten();
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agents["http:"].destroy();
    this.agents["https:"].destroy();
  }
}

/** Where one attempt goes: the checked address of the URL's host, and the attempt's time left. */
interface Dial {
  target: NonNullable<ReturnType<typeof parseCallbackUrl>>;
  address: string;
  left: number;
  signal: AbortSignal | undefined;
  onWritten: () => void;
}

function failed(
  failure: CallbackFailureKind,
  error: string,
  status: number | null = null,
  retryAfter?: string,
  excerpt: string | null = null,
): PostResult {
  return { delivered: false, failure, status, retryAfter, error, excerpt };
}

/**
 * Reads the answer whose status line is in. The status line decides: a 2xx is delivered whatever
 * its body does afterwards (broken, endless or huge), anything else failed. The body is read for
 * an excerpt and, when short, to its end so the connection can be reused; a longer one is cut off
 * with its connection (`drop`), and one still unfinished when the attempt's time is up ends with
 * the request. Returns the attempt's result as the answer stands; `finish` gets it once the body
 * ended, broke or grew too long.
 */
function readAnswer(res: http.IncomingMessage, finish: (r: PostResult) => void, drop: () => void): () => PostResult {
  const status = res.statusCode ?? 0;
  const retryAfter = res.headers["retry-after"];
  const chunks: Buffer[] = [];
  let read = 0;
  const answered = (): PostResult => {
    const excerpt = excerptOf(Buffer.concat(chunks));
    return isDeliveredStatus(status)
      ? { delivered: true, status, excerpt }
      : failed(classifyHttpStatus(status), `HTTP ${status}`, status, retryAfter, excerpt);
  };
  res.on("data", (chunk: Buffer) => {
    if (read < EXCERPT_BYTES) chunks.push(chunk.subarray(0, EXCERPT_BYTES - read));
    read += chunk.length;
    if (read > BODY_READ_BYTES) {
      finish(answered());
      drop();
    }
  });
  res.once("end", () => finish(answered()));
  res.once("error", () => finish(answered()));
  res.once("close", () => finish(answered()));
  return answered;
}
