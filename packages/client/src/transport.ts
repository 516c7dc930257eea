import { BrokerError, BrokerTransportError } from "./errors.ts";
import { readReply } from "./reply.ts";

/** Options shared by every client. */
export interface ClientOptions {
  /**
   * The variant's base URL, context path included, e.g. `http://127.0.0.1:8080/event-broker`
   * (L), `http://127.0.0.1:8080/event-m` (M), `http://127.0.0.1:8080/event-e` (E).
   */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` (API keys). Wins over `basic` when both are set. */
  token?: string;
  /** HTTP Basic credentials (`API_BASIC_AUTH`), as `user:password` or an object. */
  basic?: string | { user: string; password: string };
  /** Group used when a call names none; the broker's default is "1". */
  groupId?: string;
  /** Bound of each call in milliseconds, connection included. Default 30000. */
  timeoutMs?: number;
  /** The fetch implementation; Node's global fetch by default (tests may pass their own). */
  fetch?: typeof fetch;
}

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call; it then rejects with a BrokerTransportError of failure `aborted`. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
}

/** Per-call options of operations that take a group. */
export interface GroupCallOptions extends CallOptions {
  groupId?: string;
}

export type Params = Record<string, string | number | undefined>;

type Body = { kind: "json"; value: unknown } | { kind: "text"; value: string };

const DEFAULT_TIMEOUT_MS = 30_000;

const HINTS: Record<number, string> = {
  401: " (a valid API key or credentials are required: token or basic)",
  403: " (the address, or the key's role or group, is not allowed)",
  429: " (the key's publish rate is used up; retry later)",
};

function authorization(opts: ClientOptions): string | undefined {
  if (opts.token) return `Bearer ${opts.token}`;
  if (opts.basic === undefined) return undefined;
  const pair = typeof opts.basic === "string" ? opts.basic : `${opts.basic.user}:${opts.basic.password}`;
  // btoa over the UTF-8 bytes rather than Buffer, so the transport runs wherever fetch does.
  return `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(pair)))}`;
}

/**
 * One broker call: parameters as a urlencoded POST form (every operation accepts POST, and a
 * form has no query-string size limit), the reply read as JSON (or text for subscribe's id),
 * broker errors thrown as BrokerError, everything else as BrokerTransportError.
 */
export class Transport {
  readonly options: ClientOptions;
  private readonly base: string;
  private readonly auth: string | undefined;

  constructor(options: ClientOptions) {
    this.options = options;
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.auth = authorization(options);
  }

  /**
   * Calls `operation` and returns the success payload (the envelope's `data`, or the bare body).
   * `extraHeaders` are for the operations that read a header (publish's Idempotency-Key).
   */
  async call(operation: string, params: Params, opts: CallOptions = {}, extraHeaders: Record<string, string> = {}): Promise<unknown> {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) form.append(k, String(v));
    return this.answer(operation, await this.send(operation, form, opts, extraHeaders));
  }

  /** Calls an operation whose parameters are a JSON body (rest/publishBatch) with `value` as that body. */
  async callJson(operation: string, value: unknown, opts: CallOptions = {}): Promise<unknown> {
    return this.answer(operation, await this.send(operation, JSON.stringify(value), opts, { "content-type": "application/json" }));
  }

  private answer(operation: string, body: Body): unknown {
    if (body.kind === "text") return body.value;
    const r = readReply(body.value);
    if (!r.ok) throw new BrokerError(r.code, r.message, operation);
    return r.data;
  }

  private async send(
    operation: string,
    form: URLSearchParams | string,
    opts: CallOptions,
    extraHeaders: Record<string, string>,
  ): Promise<Body> {
    const timeoutMs = opts.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", ...extraHeaders };
    if (this.auth) headers.authorization = this.auth;
    const doFetch = this.options.fetch ?? fetch;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${this.base}/${operation}`, { method: "POST", headers, body: form, signal });
      text = await res.text();
    } catch (err) {
      if (opts.signal?.aborted) throw new BrokerTransportError("aborted", "aborted by the caller", { operation, cause: err });
      if (timeout.aborted) throw new BrokerTransportError("timeout", `no reply within ${timeoutMs} ms`, { operation, cause: err });
      const why = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = why?.code ?? why?.message ?? (err as Error).message;
      throw new BrokerTransportError("network", `cannot reach ${this.base}: ${detail}`, { operation, cause: err });
    }
    if (res.status !== 200) {
      const retry = Number.parseInt(res.headers.get("retry-after") ?? "", 10);
      throw new BrokerTransportError("http", `HTTP ${res.status}${HINTS[res.status] ?? ""}${text ? `: ${text.slice(0, 200)}` : ""}`, {
        operation,
        status: res.status,
        retryAfterSec: Number.isFinite(retry) ? retry : undefined,
      });
    }
    if ((res.headers.get("content-type") ?? "").startsWith("text/plain")) return { kind: "text", value: text };
    try {
      return { kind: "json", value: JSON.parse(text) };
    } catch (err) {
      throw new BrokerTransportError("reply", `reply is not JSON: ${text.slice(0, 200)}`, { operation, status: 200, cause: err });
    }
  }
}
