/**
 * The internal failure kinds: what went wrong inside the services (never a client's mistake:
 * those are BrokerErrors from the wire table in errors.ts), each with whether trying the same
 * thing again later can succeed. The pg and Kafka classifiers (pg-failure.ts, kafka-failure.ts)
 * are the only places that look at a driver's error to pick a kind.
 */
export const FAILURE_KINDS = {
  /** Postgres did not answer in time (query timeout, no connection in time, statement cancelled). */
  STORAGE_TIMEOUT: { retryable: true },
  /** Postgres could not be reached, or dropped the connection. */
  STORAGE_UNAVAILABLE: { retryable: true },
  /** Postgres answered and refused the statement (a constraint, a missing table, bad SQL). */
  STORAGE_REJECTED: { retryable: false },
  /** The log writer refused an append at once because too many already wait: nothing was sent. */
  LOG_BACKPRESSURE: { retryable: true },
  /** Kafka refused the record itself (too large, invalid, no such topic, not allowed): not written. */
  LOG_REFUSED: { retryable: false },
  /** A send failed after it may have reached Kafka: the record may still land. */
  LOG_UNCERTAIN: { retryable: true },
  /** Creating a Kafka topic found it there already (another service made it first). */
  LOG_TOPIC_EXISTS: { retryable: false },
  /** A broker's metadata has not caught up with a just-created topic ("does not host this topic-partition"). */
  LOG_NOT_READY: { retryable: true },
  /** A delivery's lease (its BullMQ lock or the row lease) was lost to another worker. */
  LEASE_LOST: { retryable: true },
} as const satisfies Record<string, { retryable: boolean }>;

export type FailureKind = keyof typeof FAILURE_KINDS;

/** An internal failure of a known kind, keeping the driver's error as `cause`. */
export class ServiceError extends Error {
  readonly kind: FailureKind;
  readonly retryable: boolean;

  constructor(kind: FailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ServiceError";
    this.kind = kind;
    this.retryable = FAILURE_KINDS[kind].retryable;
  }
}

/** Is `err` a ServiceError of `kind`? */
export function isFailure(err: unknown, kind: FailureKind): err is ServiceError {
  return err instanceof ServiceError && err.kind === kind;
}
