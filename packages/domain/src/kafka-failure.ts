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
 * The one classifier of a failed Kafka append: LOG_BACKPRESSURE (refused before sending),
 * LOG_REFUSED (the brokers refused the record: certainly not written) or LOG_UNCERTAIN (it may
 * have reached the brokers, so it may still land). kafkajs names the broker's error in `type`;
 * its retry wrappers carry it only in their text, which is why that is read too.
 */
export function classifyKafkaFailure(err: unknown): FailureKind {
  if (err instanceof ServiceError) return err.kind;
  if ((err as { name?: unknown })?.name === "LogBackpressureError") return "LOG_BACKPRESSURE";
  const said = `${(err as { type?: string })?.type ?? ""} ${String(err)}`;
  return REFUSED_TYPES.some((t) => said.includes(t)) ? "LOG_REFUSED" : "LOG_UNCERTAIN";
}

/** After this failure, is the record known not to be in Kafka? */
export function certainlyNotWritten(err: unknown): boolean {
  const kind = classifyKafkaFailure(err);
  return kind === "LOG_BACKPRESSURE" || kind === "LOG_REFUSED";
}
