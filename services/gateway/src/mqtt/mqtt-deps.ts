import type { Logger, Spelling } from "@evb/domain";
import type { TopicCatalog } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import type { Publisher } from "../stomp/stomp-send.ts";
import type { ClientSessions } from "./client-sessions.ts";
import type { ConnectLimits } from "./mqtt-connect.ts";
import type { MqttSubscriptionsDeps } from "./mqtt-subscriptions.ts";
import type { SessionStore } from "./session-store.ts";

/** The limits of an MQTT connection (docs/configuration.md, MQTT_* and the STOMP_* ones MQTT shares). */
interface MqttLimits extends ConnectLimits {
  /** MQTT_MAX_PACKET_BYTES: the largest packet read; a larger one ends the connection. */
  maxPacketBytes: number;
  /** STOMP_PAGE_EVENTS: events a subscription reads per query. */
  pageEvents: number;
  /** STOMP_SEND_BUFFER_BYTES: bytes waiting in the socket past which deliveries wait. */
  sendBufferBytes: number;
  /** STOMP_MAX_PENDING_PUBLISHES: QoS 1 PUBLISHes awaiting their block before the connection reads further packets. */
  maxPendingPublishes: number;
  /** MAX_SUBSCRIPTIONS_PER_CALLER: filters one connection may hold. */
  maxSubscriptions: number;
  /** How often a persistent session's positions are stored while connected, ms. */
  saveEveryMs: number;
  /** How long a connection may take to send CONNECT, ms. */
  connectTimeoutMs: number;
}

/** What an MQTT connection uses: the publish path, the ledger, the access checks and the session store. */
export interface MqttDeps extends Omit<MqttSubscriptionsDeps, "pageEvents"> {
  /** The gateway's one publisher, shared with rest/publish and STOMP SEND. */
  publisher: Publisher;
  topics: TopicCatalog;
  groups: ReadonlySet<string>;
  /** The same checks the HTTP mounts make (AccessControl.checks). */
  checks: CallerChecks;
  store: SessionStore;
  clients: ClientSessions;
  limits: MqttLimits;
  /** How a will's extension is spelt (BRAND); absent: the neutral spelling. */
  spelling?: Spelling;
  logger: Logger;
}
