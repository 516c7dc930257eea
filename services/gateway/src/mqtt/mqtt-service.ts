import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Redis } from "ioredis";
import type pg from "pg";
import { childLogger, type Logger, type Mount, type Spelling } from "@evb/domain";
import { MqttSessionStore } from "@evb/storage";
import type { TopicCatalog } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import type { MessageSubscriber } from "../events/receipt-waiter.ts";
import type { UpgradeHandler } from "../http/server.ts";
import type { LedgerFeed } from "../stomp/ledger-subscription.ts";
import type { LiveRegistry } from "../stomp/session-subscriptions.ts";
import type { Publisher } from "../stomp/stomp-send.ts";
import type { MqttTls } from "../tls/gateway-tls.ts";
import { OWNER_TTL_MS, RedisClientOwners } from "./client-owners.ts";
import { ClientSessions } from "./client-sessions.ts";
import { DurableSessionStore } from "./durable-session-store.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import { MqttTcpServer } from "./mqtt-tcp-server.ts";
import { MqttWsEndpoint } from "./mqtt-ws-endpoint.ts";
import { REDIS_TIMEOUT_MS, RedisSessionStore } from "./session-store.ts";

/** The gateway settings MQTT reads (docs/configuration.md, MQTT_* and the STOMP_* it shares). */
interface MqttSettings {
  HOST: string;
  REDIS_PREFIX: string;
  MQTT_PORT?: number | undefined;
  MQTT_TLS_PORT?: number | undefined;
  MQTT_MAX_PACKET_BYTES: number;
  MQTT_MAX_INFLIGHT: number;
  MQTT_SESSION_EXPIRY_MAX_MS: number;
  STOMP_PAGE_EVENTS: number;
  STOMP_SEND_BUFFER_BYTES: number;
  STOMP_MAX_PENDING_PUBLISHES: number;
  MAX_SUBSCRIPTIONS_PER_CALLER: number;
}

export interface MqttServiceOptions {
  settings: MqttSettings;
  mounts: readonly Mount[];
  /** The gateway's one publisher, shared with rest/publish and STOMP. */
  publisher: Publisher;
  topics: TopicCatalog;
  ledger: LedgerFeed;
  groups: ReadonlySet<string>;
  /** STOMP's block watch and live listing: one of each per gateway. */
  blocks: MqttDeps["blocks"];
  live: LiveRegistry;
  /** STOMP's per-caller quota: a caller's STOMP subscriptions and MQTT filters count together. */
  quota: MqttDeps["quota"];
  redis: Redis;
  /** Postgres: the durable copy of the persistent sessions (table mqtt_sessions). */
  pool: pg.Pool;
  /** The gateway's pub/sub connection: take-overs of its MQTT client ids arrive on its own channel. */
  subscriber: MessageSubscriber;
  gatewayId: string;
  checks: CallerChecks;
  node: () => string;
  /** The caller of an upgrade request as the HTTP side names it (TRUSTED_PROXIES). */
  callerAddress: (req: IncomingMessage) => string | null;
  /** How a will's extension is spelt (BRAND). */
  spelling: Spelling;
  /** MQTT over TLS on MQTT_TLS_PORT (absent: TLS off). */
  tls?: MqttTls | undefined;
  logger: Logger;
}

export interface MqttService {
  upgrades: UpgradeHandler;
  /** The TCP port MQTT listens on; null when MQTT_PORT is unset. */
  port: number | null;
  /** The port MQTT over TLS listens on; null when MQTT_TLS_PORT is unset. */
  tlsPort: number | null;
  close(): Promise<void>;
}

/** How often a connected persistent session's positions are stored, ms: a killed gateway repeats at most this much. */
const SAVE_EVERY_MS = 1_000;
/**
 * How long a CONNECT waits for another gateway to end the connection holding its client id, ms:
 * past that gateway's bounded session write (REDIS_TIMEOUT_MS), so that a live one is waited for.
 */
const TAKEOVER_WAIT_MS = REDIS_TIMEOUT_MS + 1_000;
/** How long a new connection may take to send CONNECT, ms. */
const CONNECT_TIMEOUT_MS = 10_000;

/** MQTT 3.1.1 and 5, built and started: over WebSocket at `<context>/mqtt` always, over TCP on MQTT_PORT when set. */
export async function startMqtt(o: MqttServiceOptions): Promise<MqttService> {
  const s = o.settings;
  const logger = childLogger(o.logger, { component: "mqtt" });
  const clients = new ClientSessions({
    gatewayId: o.gatewayId,
    owners: new RedisClientOwners({ redis: o.redis, subscriber: o.subscriber, prefix: s.REDIS_PREFIX }),
    takeoverWaitMs: TAKEOVER_WAIT_MS,
    refreshEveryMs: OWNER_TTL_MS / 3,
    logger,
  });
  await clients.start();
  // Redis for speed, Postgres so that a Redis that lost its data loses no session (protocols.md, "Redis holds the sessions").
  const store = new DurableSessionStore({
    fast: new RedisSessionStore(o.redis, s.REDIS_PREFIX),
    durable: new MqttSessionStore(o.pool),
    now: Date.now,
    logger,
  });
  store.start();
  const deps: MqttDeps = {
    ...o,
    store,
    clients,
    limits: {
      maxPacketBytes: s.MQTT_MAX_PACKET_BYTES,
      maxInflight: s.MQTT_MAX_INFLIGHT,
      sessionExpiryMaxMs: s.MQTT_SESSION_EXPIRY_MAX_MS,
      pageEvents: s.STOMP_PAGE_EVENTS,
      sendBufferBytes: s.STOMP_SEND_BUFFER_BYTES,
      maxPendingPublishes: s.STOMP_MAX_PENDING_PUBLISHES,
      maxSubscriptions: s.MAX_SUBSCRIPTIONS_PER_CALLER,
      saveEveryMs: SAVE_EVERY_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    },
    now: Date.now,
    logger,
  };
  const ws = new MqttWsEndpoint({ mounts: o.mounts, deps, callerAddress: o.callerAddress });
  const tcp = s.MQTT_PORT === undefined ? null : new MqttTcpServer(deps);
  const port = tcp ? await tcp.listen(s.MQTT_PORT as number, s.HOST) : null;
  if (port !== null) logger.info({ host: s.HOST, port }, "MQTT listening on TCP");
  const overTls = s.MQTT_TLS_PORT === undefined || !o.tls ? null : new MqttTcpServer(deps, o.tls);
  const tlsPort = overTls ? await overTls.listen(s.MQTT_TLS_PORT as number, s.HOST) : null;
  if (tlsPort !== null) logger.info({ host: s.HOST, port: tlsPort }, "MQTT listening on TLS");
  return {
    upgrades: ws,
    port,
    tlsPort,
    async close() {
      await Promise.all([ws.close(), tcp?.close(), overTls?.close()]);
      await Promise.all([clients.close(), store.close()]);
    },
  };
}

/** One upgrade handler over several (STOMP's `<context>/stomp`, MQTT's `<context>/mqtt`): the first that handles a path takes it. */
export function upgradeRoutes(...handlers: UpgradeHandler[]): UpgradeHandler {
  return {
    handles: (req) => handlers.some((h) => h.handles(req)),
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const h = handlers.find((x) => x.handles(req));
      return h ? h.upgrade(req, socket, head) : Promise.resolve(void socket.destroy());
    },
  };
}
