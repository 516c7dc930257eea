import type { UserProperties } from "mqtt-packet";
import { BrokerError, EXTENSION_PREFIX, idempotencyKeyOf, NEUTRAL_SPELLING, type Spelling } from "@evb/domain";
import { checkEvent, type PublishOutcome, type PublishRequest } from "../events/publish-operation.ts";
import { clientTrace } from "../stomp/stomp-send.ts";
import { Reason, type Refusal, refusalOf } from "./mqtt-replies.ts";

/**
 * The pure parts of an MQTT PUBLISH as an event (protocols.md 3.4, docs/protocols.md#mqtt): the
 * topic name verbatim, the payload as content (UTF-8 text, as every event's content is), and
 * with MQTT 5 the user properties named `event-…` as extensions and `idempotency-key` as the
 * publish's Idempotency-Key. The original stored no extensions from MQTT.
 */

/** The user property naming a publish as `Idempotency-Key` does on rest/publish (docs/idempotency.md). */
const IDEMPOTENCY_KEY_PROPERTY = "idempotency-key";
/** The extension a will message carries, as in the original (protocols.md 3.2); neutral spelling. */
export const WILL_EXTENSION = "event-willmessage";

/** What a PUBLISH (or a will) carries that becomes an event. */
export interface PublishedMessage {
  topic: string;
  payload: Buffer | string;
  userProperties?: UserProperties | undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** A message as a checked publish in `group`, or why it is refused (as an MQTT 5 reason). */
export function publishRequest(m: PublishedMessage, group: string, remoteIp: string): PublishRequest | Refusal {
  let content: string;
  try {
    content = typeof m.payload === "string" ? m.payload : utf8.decode(m.payload);
  } catch {
    return { reason: Reason.PAYLOAD_FORMAT_INVALID, message: "the payload is not UTF-8 text; event content is text" };
  }
  const extensions: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.userProperties ?? {})) {
    if (k.startsWith(EXTENSION_PREFIX)) extensions[k] = first(v) ?? "";
  }
  const bad = checkEvent(m.topic, content, extensions);
  if (bad) return refusalOf(bad);
  let idempotencyKey: string | undefined;
  try {
    idempotencyKey = idempotencyKeyOf(first(m.userProperties?.[IDEMPOTENCY_KEY_PROPERTY]), undefined);
  } catch (err) {
    if (err instanceof BrokerError) return refusalOf(err);
    throw err;
  }
  // MQTT 5 user properties `traceparent` and `tracestate`: the client's W3C trace context.
  const trace = clientTrace(first(m.userProperties?.traceparent), first(m.userProperties?.tracestate));
  return { group, topic: m.topic, content, extensions, remoteIp, idempotencyKey, ...(trace ? { trace } : {}) };
}

/**
 * A will message as a publish: its extension marks it, key and value the same name
 * (protocols.md 3.2): `event-willmessage`, or `weevent-willmessage` under BRAND=weevent (8).
 */
export function willRequest(
  m: PublishedMessage,
  group: string,
  remoteIp: string,
  spelling: Spelling = NEUTRAL_SPELLING,
): PublishRequest | Refusal {
  const r = publishRequest(m, group, remoteIp);
  if ("reason" in r) return r;
  const will = spelling.name(WILL_EXTENSION);
  return { ...r, extensions: { ...r.extensions, [will]: will } };
}

/**
 * How a publish that reached the log is acknowledged: null (success) once its block is sealed;
 * otherwise the failure: not confirmed in time (it may still land), or refused.
 */
export function outcomeRefusal(o: PublishOutcome): Refusal | null {
  if (o.status === "SUCCESS") return null;
  if (o.status === "TIMEOUT") {
    return { reason: Reason.UNSPECIFIED, message: "not confirmed within PUBLISH_TIMEOUT_MS; the event may still be stored" };
  }
  if (o.err instanceof BrokerError) return refusalOf(o.err);
  return { reason: Reason.UNSPECIFIED, message: "the log did not take the event; publish again" };
}

/** A key refused by its role, group or publish rate (the HTTP side's words). */
export function verdictRefusal(verdict: "forbidden" | { retryAfterMs: number }): Refusal {
  if (verdict === "forbidden") return { reason: Reason.NOT_AUTHORIZED, message: "not allowed" };
  return { reason: Reason.QUOTA_EXCEEDED, message: "publish rate limit of this key reached; retry later" };
}
