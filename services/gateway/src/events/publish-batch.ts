import { BrokerError, idempotencyKeyOf, NEUTRAL_SPELLING, type Spelling } from "@evb/domain";
import { checkEvent } from "./publish-operation.ts";

/**
 * rest/publishBatch's body, read and checked (pure). The body is one JSON object
 * `{"groupId": "1", "events": [{"topic", "content", "extensions", "idempotencyKey"}, …]}`; the
 * batch as a whole is refused only when it is not that shape or too large, and each event is
 * then checked on its own, as rest/publish checks one, so that one bad event is one error among
 * the other events' results.
 */

/** Most events one batch may carry; a larger batch is refused whole (100212) before any of it is published. */
export const MAX_BATCH_EVENTS = 1000;

/** One event of a batch as sent: anything, until checkBatchEvent says what it is. */
type RawEvent = unknown;

/** A batch whose shape is right. Its `groupId` is read as a parameter (app.ts), as publish reads one. */
export interface BatchBody {
  events: readonly RawEvent[];
}

/** One checked event: what EventPublisher.start needs besides the group, the sender and the owner. */
export interface CheckedEvent {
  topic: string;
  content: string;
  extensions: Record<string, string>;
  idempotencyKey: string | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The body's shape: an object with 1 to MAX_BATCH_EVENTS events, else 100212. */
export function parseBatchBody(json: unknown): BatchBody | BrokerError {
  if (!isObject(json) || !Array.isArray(json.events)) return BrokerError.of("BATCH_INVALID");
  const events = json.events as unknown[];
  if (events.length === 0 || events.length > MAX_BATCH_EVENTS) return BrokerError.of("BATCH_INVALID");
  return { events };
}

/** How many publishes a body counts against the key's publish rate: its events; 1 for a body that is refused anyway. */
export function batchWeight(json: unknown): number {
  const body = parseBatchBody(json);
  return body instanceof BrokerError ? 1 : body.events.length;
}

/** `extensions` as a map of strings, or null when it is something else (no way to read it). */
function extensionsOf(v: unknown): Record<string, string> | null {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) return null;
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) {
    if (typeof value !== "string") return null;
    out[k] = value;
  }
  return out;
}

/**
 * One event, checked in rest/publish's order after its group (behaviour.md 7.1): a topic and
 * content that are not both strings, or extensions that are not a map of strings, are publish's
 * missing-parameter 100501; then topic name, content, extension keys and length (checkEvent);
 * then the idempotency key (100210). Whether the topic exists is the publisher's (100101).
 */
export function checkBatchEvent(raw: RawEvent, spelling: Spelling = NEUTRAL_SPELLING): CheckedEvent | BrokerError {
  if (!isObject(raw) || typeof raw.topic !== "string" || typeof raw.content !== "string") return BrokerError.of("URL_INVALID");
  const extensions = extensionsOf(raw.extensions);
  if (extensions === null) return BrokerError.of("URL_INVALID");
  const bad = checkEvent(raw.topic, raw.content, extensions, spelling);
  if (bad) return bad;
  const key = raw.idempotencyKey;
  if (key !== undefined && key !== null && typeof key !== "string") return BrokerError.of("IDEMPOTENCY_KEY_INVALID");
  try {
    const idempotencyKey = idempotencyKeyOf(typeof key === "string" ? key : undefined, undefined);
    return { topic: raw.topic, content: raw.content, extensions, idempotencyKey };
  } catch (err) {
    if (err instanceof BrokerError) return err;
    throw err;
  }
}
