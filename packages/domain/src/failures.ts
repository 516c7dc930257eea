/**
 * The internal failure kinds: what went wrong inside the services (never a client's mistake:
 * those are BrokerErrors from the wire table in errors.ts). Whether to try again is decided
 * where the failure is met, from its kind (and, for Kafka, the client's own `canRetry`). The pg
 * and Kafka classifiers (pg-failure.ts, kafka-failure.ts) are the only places that look at a
 * driver's error to pick a kind.
 */
export const FAILURE_KINDS = [
  /** Postgres did not answer in time (query timeout, no connection in time, statement cancelled). */
  "STORAGE_TIMEOUT",
  /** Postgres could not be reached, or dropped the connection. */
  "STORAGE_UNAVAILABLE",
  /** Postgres answered and refused the statement (a constraint, a missing table, bad SQL). */
  "STORAGE_REJECTED",
  /** The log writer refused an append at once because too many already wait: nothing was sent. */
  "LOG_BACKPRESSURE",
  /** Kafka refused the record itself (too large, invalid, no such topic, not allowed): not written. */
  "LOG_REFUSED",
  /** A send failed after it may have reached Kafka: the record may still land. */
  "LOG_UNCERTAIN",
  /** Creating a Kafka topic found it there already (another service made it first). */
  "LOG_TOPIC_EXISTS",
  /** The brokers do not lead every partition of a topic yet (a topic just created, a leader being elected). */
  "LOG_NOT_READY",
  /** A delivery's lease (its BullMQ lock or the row lease) was lost to another worker. */
  "LEASE_LOST",
] as const;

export type FailureKind = (typeof FAILURE_KINDS)[number];

/** An internal failure of a known kind, keeping the driver's error as `cause`. */
export class ServiceError extends Error {
  readonly kind: FailureKind;

  constructor(kind: FailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ServiceError";
    this.kind = kind;
  }
}
