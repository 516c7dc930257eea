import type { IConnectPacket } from "mqtt-packet";
import { BrokerError } from "@evb/domain";
import { groupFromValue } from "../http/group.ts";
import type { MqttVersion, Refusal } from "./mqtt-replies.ts";
import { Reason } from "./mqtt-replies.ts";
import type { PublishedMessage } from "./mqtt-publish.ts";

/**
 * The pure decisions of an MQTT CONNECT (docs/protocols.md#mqtt): the client id, the group, how
 * long the session outlives the connection, the keep-alive, the window of unacknowledged
 * deliveries, and the will. Credentials are checked by the session (they need the key store).
 */

export interface ConnectLimits {
  /** MQTT_SESSION_EXPIRY_MAX_MS: the longest a persistent session is kept after its connection ends. */
  sessionExpiryMaxMs: number;
  /** MQTT_MAX_INFLIGHT: QoS 1 deliveries a connection may have unacknowledged. */
  maxInflight: number;
}

/** What an accepted CONNECT agreed. */
export interface SessionTerms {
  version: MqttVersion;
  clientId: string;
  /** The client sent no id and got this one (MQTT 5: told in CONNACK). */
  assigned: boolean;
  /** Clean session / clean start: a stored session of this id is discarded. */
  clean: boolean;
  /** How long the session is kept after the connection ends, ms; 0: it ends with the connection. */
  expiryMs: number;
  /** Whether expiryMs is below what the client asked for (MQTT 5 then says so in CONNACK). */
  expiryCapped: boolean;
  /** The client's keep-alive, ms; 0: none. */
  keepAliveMs: number;
  group: string;
  /** Unacknowledged QoS 1 deliveries at once: the client's Receive Maximum, at most maxInflight. */
  window: number;
  /** The largest packet the client takes (MQTT 5 Maximum Packet Size); undefined: no limit. */
  maxPacketToClient: number | undefined;
  will: PublishedMessage | null;
}

/** The user property of an MQTT 5 CONNECT that names the session's group (absent: group 1). */
const GROUP_PROPERTY = "groupId";
/** MQTT 3.1 allowed client ids of 1–23 characters (protocols.md 3.1). */
const MQTT31_MAX_CLIENT_ID = 23;
/** Longer ids are refused: they name a Redis key. */
const MAX_CLIENT_ID = 256;
/** MQTT 5's "never expires". */
const NEVER = 0xffffffff;

/** The terms of a CONNECT, or why it is refused. `freshId` names a client that sent none. */
export function connectTerms(
  p: IConnectPacket,
  groups: ReadonlySet<string>,
  limits: ConnectLimits,
  freshId: () => string,
): SessionTerms | Refusal {
  const version: MqttVersion = p.protocolVersion === 3 || p.protocolVersion === 5 ? p.protocolVersion : 4;
  const clean = p.clean !== false;
  let clientId = p.clientId ?? "";
  const assigned = clientId === "";
  if (assigned) {
    // 3.1.1 assigns an id only to a clean session (MQTT-3.1.3-8); 3.1 never did.
    if (version === 3 || (version === 4 && !clean)) return { reason: Reason.CLIENT_ID_INVALID, message: "a client id is required" };
    clientId = freshId();
  }
  if ((version === 3 && clientId.length > MQTT31_MAX_CLIENT_ID) || clientId.length > MAX_CLIENT_ID) {
    return { reason: Reason.CLIENT_ID_INVALID, message: "the client id is too long" };
  }
  let group: string;
  try {
    const named = p.properties?.userProperties?.[GROUP_PROPERTY];
    group = groupFromValue("L", Array.isArray(named) ? named[0] : named, groups);
  } catch (err) {
    if (!(err instanceof BrokerError)) throw err;
    return { reason: Reason.UNSPECIFIED, message: `${err.message} (${err.code})` };
  }
  const expiry = sessionExpiry(version, clean, p.properties?.sessionExpiryInterval, limits.sessionExpiryMaxMs);
  const receiveMaximum = version === 5 ? (p.properties?.receiveMaximum ?? 65_535) : 65_535;
  return {
    version,
    clientId,
    assigned,
    clean,
    ...expiry,
    keepAliveMs: (p.keepalive ?? 0) * 1000,
    group,
    window: Math.max(1, Math.min(receiveMaximum, limits.maxInflight)),
    maxPacketToClient: version === 5 ? p.properties?.maximumPacketSize : undefined,
    will: p.will ? { topic: p.will.topic, payload: p.will.payload, userProperties: p.will.properties?.userProperties } : null,
  };
}

/**
 * How long the session outlives the connection: MQTT 5's Session Expiry Interval (seconds; 0 or
 * absent: not at all), MQTT 3's clean session 0 (as long as the broker keeps any), both capped
 * at `maxMs`.
 */
export function sessionExpiry(
  version: MqttVersion,
  clean: boolean,
  intervalS: number | undefined,
  maxMs: number,
): { expiryMs: number; expiryCapped: boolean } {
  if (version !== 5) return { expiryMs: clean ? 0 : maxMs, expiryCapped: false };
  const asked = intervalS === undefined ? 0 : intervalS === NEVER ? Number.POSITIVE_INFINITY : intervalS * 1000;
  return { expiryMs: Math.min(asked, maxMs), expiryCapped: asked > maxMs };
}
