import { z } from "zod";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "./idempotency.ts";

/**
 * One publish as it travels through Kafka (the value of a log-topic record, keyed by topic).
 * `requestId` and `gatewayId` route the receipt back to the waiting HTTP request.
 * `httpRequestId` is the HTTP request's id (X-Request-Id, see the gateway's access log), so the
 * indexer's log lines about the record name the request that published it; optional, so records
 * written before it existed still decode. `idempotency` is the publish's Idempotency-Key and
 * how long it counts from the first event's seal time (the gateway's IDEMPOTENCY_RETENTION_MS,
 * carried in the record so that a replay decides as the first seal did whatever the indexers'
 * settings); absent on records without a key and on records from before it existed.
 */
/** Ten years: a bound for hand-made records, so that a seal time plus it always fits the ledger's bigint. */
const MAX_RETENTION_MS = 315_360_000_000;

export const LogRecord = z.object({
  v: z.literal(1),
  requestId: z.string().min(1),
  gatewayId: z.string().min(1),
  groupId: z.string().min(1),
  topic: z.string().min(1),
  content: z.string(),
  extensions: z.record(z.string(), z.string()),
  sender: z.string(),
  publishedAt: z.number().int(),
  // A diagnostic: a bad value is dropped, never the record (and with it the event).
  httpRequestId: z.string().max(128).optional().catch(undefined),
  // A malformed one (a hand-made record) is dropped, never the event: sealed as without a key.
  idempotency: z
    .object({ key: z.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH), retentionMs: z.number().int().positive().max(MAX_RETENTION_MS) })
    .optional()
    .catch(undefined),
});
export type LogRecord = z.infer<typeof LogRecord>;

export function encodeLogRecord(r: LogRecord): Buffer {
  return Buffer.from(JSON.stringify(r), "utf8");
}

/** Decodes a record value; a malformed record is a value, not a throw (the indexer skips it and says so). */
export function decodeLogRecord(value: Buffer | null): { ok: true; record: LogRecord } | { ok: false; error: string } {
  if (!value) return { ok: false, error: "empty record value" };
  let json: unknown;
  try {
    json = JSON.parse(value.toString("utf8"));
  } catch (err) {
    return { ok: false, error: `not JSON: ${String(err)}` };
  }
  const parsed = LogRecord.safeParse(json);
  return parsed.success ? { ok: true, record: parsed.data } : { ok: false, error: parsed.error.message };
}

/**
 * What the indexer tells the waiting gateway once the event is in a block. `idempotency` only
 * for a keyed publish answered without an event of its own: `duplicate` (eventId and height are
 * the original's) or `conflict` (the key names another content's event).
 */
export const Receipt = z.object({
  requestId: z.string(),
  eventId: z.string(),
  height: z.number().int(),
  idempotency: z.enum(["duplicate", "conflict"]).optional(),
});
export type Receipt = z.infer<typeof Receipt>;

function isReceipt(v: unknown): v is Receipt {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.requestId === "string" &&
    typeof r.eventId === "string" &&
    Number.isSafeInteger(r.height) &&
    (r.idempotency === undefined || r.idempotency === "duplicate" || r.idempotency === "conflict")
  );
}

/**
 * The receipts in a message on a gateway's receipt channel (a list of receipts, or one), the
 * malformed entries left out; null when the message is not JSON or neither a list nor a
 * receipt. The same verdicts as `Receipt` applied entry by entry, checked by hand: a gateway
 * reads one such message per block, on the publish path.
 */
export function decodeReceipts(message: string): Receipt[] | null {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return null;
  }
  if (Array.isArray(value)) return value.filter(isReceipt);
  return isReceipt(value) ? [value] : null;
}

/** The Kafka log topic that carries a group's publishes. */
export function logTopicName(prefix: string, groupId: string): string {
  return `${prefix}log.${groupId}`;
}
