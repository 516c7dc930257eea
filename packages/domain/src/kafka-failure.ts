import type { FailureKind } from "./failures.ts";
import { ServiceError } from "./failures.ts";

/** Kafka error types after which the brokers certainly did not write the record. */
const REFUSED_TYPES = [
  "MESSAGE_TOO_LARGE",
  "RECORD_LIST_TOO_LARGE",
  "INVALID_RECORD",
  "CORRUPT_MESSAGE",
  "UNKNOWN_TOPIC_OR_PARTITION",
  "AUTHORIZATION_FAILED",
];

/**
 * The one classifier of kafkajs failures: LOG_BACKPRESSURE (an append refused before sending),
 * LOG_REFUSED (the brokers refused the record: certainly not written), LOG_TOPIC_EXISTS (a topic
 * creation raced another's), LOG_NOT_READY (a broker's metadata lags a new topic) or
 * LOG_UNCERTAIN (an append that may have reached the brokers, so may still land). kafkajs names
 * the broker's error in `type`; its wrappers carry it only in their text, so that is read too.
 */
export function classifyKafkaFailure(err: unknown): FailureKind {
  if (err instanceof ServiceError) return err.kind;
  const type = (err as { type?: string })?.type ?? "";
  const said = `${type} ${String(err)}`;
  if (REFUSED_TYPES.some((t) => said.includes(t))) return "LOG_REFUSED";
  const text = said.toLowerCase();
  if (type === "TOPIC_ALREADY_EXISTS" || text.includes("already exists")) return "LOG_TOPIC_EXISTS";
  if (text.includes("does not host this topic-partition")) return "LOG_NOT_READY";
  return "LOG_UNCERTAIN";
}

/** After this failure, is the record known not to be in Kafka? */
export function certainlyNotWritten(err: unknown): boolean {
  const kind = classifyKafkaFailure(err);
  return kind === "LOG_BACKPRESSURE" || kind === "LOG_REFUSED";
}
