import { generate, type Packet, type UserProperties } from "mqtt-packet";
import { BROKER_ERRORS, BrokerError, type BrokerErrorName } from "@evb/domain";
import { isStorageTimeout } from "@evb/storage";

/**
 * The packets the broker writes and the reason codes it gives, per protocol level (3: MQTT 3.1,
 * 4: 3.1.1, 5: 5.0). Pure: each builder returns a packet for mqtt-packet to encode. Fixed-header
 * flags are the standard ones (mqtt-packet's), not the original's (protocols.md 3.1).
 */

export type MqttVersion = 3 | 4 | 5;

/** MQTT 5 reason codes the broker uses (MQTT 5.0 2.4). */
export const Reason = {
  SUCCESS: 0x00,
  NO_SUBSCRIPTION_EXISTED: 0x11,
  UNSPECIFIED: 0x80,
  MALFORMED_PACKET: 0x81,
  PROTOCOL_ERROR: 0x82,
  UNSUPPORTED_VERSION: 0x84,
  CLIENT_ID_INVALID: 0x85,
  BAD_CREDENTIALS: 0x86,
  NOT_AUTHORIZED: 0x87,
  SERVER_UNAVAILABLE: 0x88,
  SERVER_SHUTTING_DOWN: 0x8b,
  KEEP_ALIVE_TIMEOUT: 0x8d,
  SESSION_TAKEN_OVER: 0x8e,
  TOPIC_FILTER_INVALID: 0x8f,
  TOPIC_NAME_INVALID: 0x90,
  RECEIVE_MAXIMUM_EXCEEDED: 0x93,
  TOPIC_ALIAS_INVALID: 0x94,
  PACKET_TOO_LARGE: 0x95,
  QUOTA_EXCEEDED: 0x97,
  PAYLOAD_FORMAT_INVALID: 0x99,
  RETAIN_NOT_SUPPORTED: 0x9a,
  QOS_NOT_SUPPORTED: 0x9b,
  SHARED_SUBSCRIPTIONS_NOT_SUPPORTED: 0x9e,
} as const;

/** A refusal or failure: the MQTT 5 reason code and the text sent as its reason string. */
export interface Refusal {
  reason: number;
  message: string;
}

/** The MQTT 3.1.1 CONNACK return code standing for an MQTT 5 reason code. */
function connackReturnCode(reason: number): number {
  switch (reason) {
    case Reason.SUCCESS:
      return 0;
    case Reason.UNSUPPORTED_VERSION:
      return 1;
    case Reason.CLIENT_ID_INVALID:
      return 2;
    case Reason.BAD_CREDENTIALS:
      return 4;
    case Reason.NOT_AUTHORIZED:
      return 5;
    default:
      return 3;
  }
}

export type ConnackProperties = NonNullable<Extract<Packet, { cmd: "connack" }>["properties"]>;

export function connack(version: MqttVersion, reason: number, sessionPresent: boolean, properties?: ConnackProperties): Packet {
  if (version !== 5) return { cmd: "connack", returnCode: connackReturnCode(reason), sessionPresent };
  return { cmd: "connack", reasonCode: reason, sessionPresent, ...(properties ? { properties } : {}) };
}

/** PUBACK; an MQTT 5 failure carries its reason string (3.1.1 has no negative PUBACK: the caller closes instead). */
export function puback(version: MqttVersion, messageId: number, failure?: Refusal): Packet {
  if (version !== 5 || !failure) return { cmd: "puback", messageId };
  return { cmd: "puback", messageId, reasonCode: failure.reason, properties: { reasonString: failure.message } };
}

/** SUBACK: granted QoS per filter, or a failure (3.1.1: 0x80 for any failure). */
export function suback(version: MqttVersion, messageId: number, codes: readonly number[]): Packet {
  const granted = version === 5 ? [...codes] : codes.map((c) => (c <= 2 ? c : 0x80));
  return { cmd: "suback", messageId, granted };
}

export function unsuback(version: MqttVersion, messageId: number, codes: readonly number[]): Packet {
  return version === 5 ? { cmd: "unsuback", messageId, granted: [...codes] } : { cmd: "unsuback", messageId, granted: [] };
}

export const PINGRESP: Packet = { cmd: "pingresp" };

/** An MQTT 5 DISCONNECT from the server (3.1.1 has none: the connection is just closed). */
export function disconnect(failure: Refusal): Packet {
  return { cmd: "disconnect", reasonCode: failure.reason, properties: { reasonString: failure.message } };
}

/** One event as a PUBLISH to a subscriber: its real topic and raw content; MQTT 5 also gets the eventId and extensions as user properties. */
export function delivery(
  version: MqttVersion,
  event: { topic: string; content: Buffer; eventId: string; extensions: Record<string, string> },
  qos: 0 | 1,
  messageId: number | undefined,
): Packet {
  const base = { cmd: "publish" as const, topic: event.topic, payload: event.content, qos, dup: false, retain: false };
  const withId = qos === 1 ? { ...base, messageId } : base;
  if (version !== 5) return withId;
  const userProperties: UserProperties = { ...event.extensions, eventId: event.eventId };
  return { ...withId, properties: { userProperties } };
}

export function encode(packet: Packet, version: MqttVersion): Buffer {
  return generate(packet, { protocolVersion: version });
}

const codesOf = (names: BrokerErrorName[]) => new Set<number>(names.map((n) => BROKER_ERRORS[n].code));
const TOPIC_CODES = codesOf(["TOPIC_NOT_EXIST", "TOPIC_TOO_LONG", "TOPIC_BLANK", "TOPIC_INVALID_CHAR"]);
const CONTENT_CODES = codesOf(["CONTENT_BLANK", "CONTENT_TOO_LONG"]);

/**
 * A failure as an MQTT 5 reason with the broker's message and code as its reason string: the
 * topic's rules and a missing topic 0x90, the content's 0x99, anything else (extensions, a
 * reused idempotency key, storage trouble) 0x80.
 */
export function refusalOf(err: unknown): Refusal {
  const broker = err instanceof BrokerError ? err : BrokerError.of(isStorageTimeout(err) ? "TRANSACTION_TIMEOUT" : "TRANSACTION_FAILED");
  const message = `${broker.wireMessage ?? broker.message} (${broker.code})`;
  if (TOPIC_CODES.has(broker.code)) return { reason: Reason.TOPIC_NAME_INVALID, message };
  if (CONTENT_CODES.has(broker.code)) return { reason: Reason.PAYLOAD_FORMAT_INVALID, message };
  return { reason: Reason.UNSPECIFIED, message };
}
