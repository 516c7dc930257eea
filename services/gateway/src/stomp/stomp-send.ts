import { BrokerError, idempotencyKeyOf, NEUTRAL_SPELLING, type Spelling } from "@evb/domain";
import { isStorageTimeout } from "@evb/storage";
import { checkEvent, type PublishOutcome, type PublishRequest } from "../events/publish-operation.ts";
import { groupFromValue } from "../http/group.ts";
import { header, type StompFrame } from "./stomp-frame.ts";
import { brokerError, errorFrame, receipt, sendNotConfirmed } from "./stomp-replies.ts";

/**
 * The SEND header naming the publish, as `Idempotency-Key` on rest/publish (docs/idempotency.md).
 * Lower case, as STOMP headers are written; not `event-`, so it is never taken for an extension.
 */
const IDEMPOTENCY_KEY_STOMP_HEADER = "idempotency-key";

/**
 * The W3C trace context of a SEND (`traceparent`, `tracestate` frame headers, as in HTTP): the
 * publish span continues the client's trace (docs/observability.md). None when absent.
 */
export function clientTrace(traceparent: string | undefined, tracestate: string | undefined): PublishRequest["trace"] {
  return traceparent ? { traceparent, ...(tracestate ? { tracestate } : {}) } : undefined;
}

/** The publish path SEND shares with rest/publish (EventPublisher); `owner` as ownerId gives it. */
export interface Publisher {
  start(req: PublishRequest, owner: string): Promise<{ outcome: Promise<PublishOutcome> }>;
}

/**
 * A SEND as a checked publish (protocols.md 2.4, the check order of behaviour.md 7.1): the group
 * (blank → 1, unknown 200211), then the destination as a topic name (missing → 100103), the body
 * as content, and every `event-` header (and `weevent-` only under BRAND=weevent:
 * Spelling.isHeaderExtension; first value each, empty included, stored under the name sent) as an
 * extension, and last an
 * `idempotency-key` (100210 when bad, as rest/publish). `traceparent` and `tracestate` are the
 * client's trace context (clientTrace). Other headers (`receipt`, `content-type`,
 * `content-length`, …) are not stored.
 */
export function sendRequest(
  frame: StompFrame,
  groups: ReadonlySet<string>,
  remoteIp: string,
  spelling: Spelling = NEUTRAL_SPELLING,
): PublishRequest | BrokerError {
  let group: string;
  try {
    group = groupFromValue("L", header(frame, "groupId"), groups);
  } catch (err) {
    if (err instanceof BrokerError) return err;
    throw err;
  }
  const topic = header(frame, "destination") ?? "";
  const extensions: Record<string, string> = {};
  for (const [k, v] of frame.headers) if (spelling.isHeaderExtension(k) && !(k in extensions)) extensions[k] = v;
  const bad = checkEvent(topic, frame.body, extensions, spelling);
  if (bad) return bad;
  let idempotencyKey: string | undefined;
  try {
    idempotencyKey = idempotencyKeyOf(header(frame, IDEMPOTENCY_KEY_STOMP_HEADER), undefined);
  } catch (err) {
    if (err instanceof BrokerError) return err;
    throw err;
  }
  const trace = clientTrace(header(frame, "traceparent"), header(frame, "tracestate"));
  return { group, topic, content: frame.body, extensions, remoteIp, idempotencyKey, ...(trace ? { trace } : {}) };
}

/** The ERROR a failure before the log answers: the broker's code, or the storage codes for Postgres trouble. */
export function failureFrame(err: unknown, receiptId: string | undefined): string {
  if (err instanceof BrokerError) return brokerError(err, receiptId);
  return brokerError(BrokerError.of(isStorageTimeout(err) ? "TRANSACTION_TIMEOUT" : "TRANSACTION_FAILED"), receiptId);
}

/**
 * The reply to a SEND that reached the log: RECEIPT with the eventId once sealed (a repeated
 * key's: the first event's); a broker error (100211, a key reused for other content) as its
 * coded ERROR; else the SendResult's ERROR.
 */
export function sendReply(o: PublishOutcome, topic: string, receiptId: string | undefined): string {
  if (o.status === "SUCCESS") {
    return receipt(
      [
        ["destination", topic],
        ["eventId", o.eventId],
      ],
      receiptId,
    );
  }
  if (o.status === "ERROR" && o.err instanceof BrokerError) return brokerError(o.err, receiptId);
  return sendNotConfirmed(o.status, topic, receiptId);
}

/** A key refused by its role, group or publish rate: ERROR with the HTTP side's words, no code. */
export function refusedFrame(verdict: "forbidden" | { retryAfterMs: number }, receiptId: string | undefined): string {
  const message = verdict === "forbidden" ? "not allowed" : "publish rate limit of this key reached; retry later";
  return errorFrame(message, undefined, receiptId);
}
