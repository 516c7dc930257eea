/**
 * A broker exception: the reply was the variant's error object (`{code, message}` or
 * `{code, message, data: null}`). `code` is the broker's code (100101, 200211, -1, …); `message`
 * its exact wire text, null where a generic code carried none.
 */
export class BrokerError extends Error {
  readonly code: number;
  readonly brokerMessage: string | null;
  /** The operation path that answered, e.g. `rest/publish`. */
  readonly operation: string;

  constructor(code: number, message: string | null, operation: string) {
    super(`${operation}: ${code} ${message ?? "(no message)"}`);
    this.name = "BrokerError";
    this.code = code;
    this.brokerMessage = message;
    this.operation = operation;
  }
}

/** Why a call got no broker reply at all. */
export type TransportFailure =
  /** No connection, DNS failure, connection reset. */
  | "network"
  /** The call's `timeoutMs` passed. */
  | "timeout"
  /** The caller's AbortSignal fired. */
  | "aborted"
  /** An HTTP status other than 200: 401 (credentials), 403 (address or key not allowed), 404 (no such operation in L), 429 (key's publish rate), 503 (key not checkable now) … */
  | "http"
  /** A 200 whose body is not what the broker sends (not JSON, wrong shape). */
  | "reply";

/** The call did not reach the broker or the broker's HTTP layer refused it; `cause` holds the underlying error. */
export class BrokerTransportError extends Error {
  readonly failure: TransportFailure;
  /** HTTP status for `http` (and `reply`) failures. */
  readonly status: number | undefined;
  readonly operation: string;
  /** Seconds to wait, from a 429's or 503's Retry-After header. */
  readonly retryAfterSec: number | undefined;

  constructor(
    failure: TransportFailure,
    message: string,
    opts: { operation: string; status?: number; retryAfterSec?: number; cause?: unknown },
  ) {
    super(`${opts.operation}: ${message}`, { cause: opts.cause });
    this.name = "BrokerTransportError";
    this.failure = failure;
    this.status = opts.status;
    this.operation = opts.operation;
    this.retryAfterSec = opts.retryAfterSec;
  }
}
