import type { FailureKind } from "./failures.ts";
import { ServiceError } from "./failures.ts";

/**
 * Kafka's answers after which the brokers certainly did not write the record: the one list.
 * Each is an `apiId` @platformatic/kafka puts on the broker's answer (a ProtocolError).
 */
const REFUSALS: ReadonlySet<string> = new Set([
  "MESSAGE_TOO_LARGE",
  "RECORD_LIST_TOO_LARGE",
  "INVALID_RECORD",
  "CORRUPT_MESSAGE",
  "INVALID_TOPIC_EXCEPTION",
  "UNKNOWN_TOPIC_OR_PARTITION",
  "TOPIC_AUTHORIZATION_FAILED",
  "CLUSTER_AUTHORIZATION_FAILED",
]);

/** The fields @platformatic/kafka's errors carry: `apiId` (the broker's answer), `canRetry`, and their nesting. */
interface ClientErrorFields {
  apiId?: unknown;
  canRetry?: unknown;
  errors?: unknown;
  cause?: unknown;
}

/**
 * The innermost errors of a failure: a client error nests the attempts of a retried request
 * (`errors`) and what caused it (`cause`); anything else is a leaf of its own.
 */
function leaves(err: unknown, depth = 0): ClientErrorFields[] {
  if (!err || typeof err !== "object") return [{}];
  const e = err as ClientErrorFields;
  const inner = nested(e);
  if (inner.length === 0 || depth > 8) return [e];
  return inner.flatMap((x) => leaves(x, depth + 1));
}

function nested(e: ClientErrorFields): unknown[] {
  return [...(Array.isArray(e.errors) ? e.errors : []), ...(e.cause === undefined ? [] : [e.cause])];
}

/** Every error of a failure, outermost first. */
function chain(err: unknown, depth = 0): ClientErrorFields[] {
  if (!err || typeof err !== "object" || depth > 8) return [];
  const e = err as ClientErrorFields;
  return [e, ...nested(e).flatMap((x) => chain(x, depth + 1))];
}

/**
 * The one classifier of Kafka failures, from the client's own structured fields (never its
 * text): LOG_BACKPRESSURE (an append refused before sending), LOG_REFUSED (every attempt was
 * refused by the brokers: certainly not written), LOG_TOPIC_EXISTS (a topic creation raced
 * another's) or LOG_UNCERTAIN (an append that may have reached the brokers, so may still land).
 * A retried send whose attempts include a timeout or a lost connection is uncertain even when
 * the last attempt was refused: an earlier one may have been written.
 */
export function classifyKafkaFailure(err: unknown): FailureKind {
  if (err instanceof ServiceError) return err.kind;
  const found = leaves(err);
  const answers = found.map((e) => (typeof e.apiId === "string" ? e.apiId : undefined));
  if (answers.every((a) => a !== undefined && REFUSALS.has(a))) return "LOG_REFUSED";
  if (answers.every((a) => a === "TOPIC_ALREADY_EXISTS")) return "LOG_TOPIC_EXISTS";
  return "LOG_UNCERTAIN";
}

/** After this failure, is the record known not to be in Kafka? */
export function certainlyNotWritten(err: unknown): boolean {
  const kind = classifyKafkaFailure(err);
  return kind === "LOG_BACKPRESSURE" || kind === "LOG_REFUSED";
}

/**
 * Does asking again make sense, by the client's own rule: some error of the failure is marked
 * retriable (`canRetry`) and none is marked not to be (a coordinator still loading on a fresh
 * cluster, a leader election, a dropped connection; not a refusal or a bad request).
 */
export function isRetriableKafkaFailure(err: unknown): boolean {
  if (err instanceof ServiceError) return err.kind === "LOG_NOT_READY";
  const all = chain(err);
  return all.some((e) => e.canRetry === true) && !all.some((e) => e.canRetry === false);
}
