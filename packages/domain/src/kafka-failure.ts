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

/**
 * Broker answers that kafkajs retries by itself and that every fresh broker or leader change
 * gives for a moment (coordinator loading, leader election, metadata catching up). kafkajs logs
 * each at ERROR before retrying; they are debug here, since a failure that outlasts the retries
 * surfaces where the call fails (a rejected send, a crashed consumer) with its own message.
 */
const TRANSIENT_BROKER_ERRORS = new Set([
  "The coordinator is loading and hence can't process requests for this group",
  "The group coordinator is not available",
  "This is not the correct coordinator for this group",
  "This server does not host this topic-partition",
  "There is no leader for this topic-partition as we are in the middle of a leadership election",
  "This server is not the leader for that topic-partition",
  "The server disconnected before a response was received",
  "The group is rebalancing, so a rejoin is needed",
  // A member fenced out of its group (a long pause) hears this, and kafkajs re-joins.
  "The coordinator is not aware of this member",
]);

/**
 * A kafkajs log line about a transient condition it handles itself: a broker's transient
 * answer, a consumer crash caused by one (kafkajs restarts the consumer; the indexer logs that
 * at warn), and the restart notice.
 */
function isTransient(log: KafkaLogLine): boolean {
  if (typeof log.error === "string" && TRANSIENT_BROKER_ERRORS.has(log.error)) return true;
  if (log.message.startsWith("Restarting the consumer in ")) return true;
  if (log.message.endsWith("re-joining the group")) return true;
  if (log.message.startsWith("Crash: ")) for (const e of TRANSIENT_BROKER_ERRORS) if (log.message.endsWith(e)) return true;
  return false;
}

/** A kafkajs log line: its message, and the broker's error text when it names one. */
export interface KafkaLogLine {
  message: string;
  error?: unknown;
}

/**
 * How a kafkajs log line is to be logged: "noise" (dropped: kafkajs prints it on every start,
 * and our producer settings are deliberate), "transient" (debug: a condition kafkajs handles
 * itself) or "as-is" (at kafkajs's own level).
 */
export function triageKafkaLog(log: KafkaLogLine): "noise" | "transient" | "as-is" {
  if (log.message.includes("Limiting retries for the idempotent producer")) return "noise";
  return isTransient(log) ? "transient" : "as-is";
}
