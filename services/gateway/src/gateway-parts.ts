import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { Server as HttpsServer } from "node:https";
import { childLogger, type Logger, logTopicName, redisKeys, Spelling } from "@evb/domain";
import { createLogWriter, type KafkaClient, type LogWriterCore } from "@evb/eventlog";
import { LedgerGuard, ledgerReports, type NodeRegistry } from "@evb/registry";
import { answerHealth, HEALTH_PATHS, KafkaProbe, metadataAdmin } from "@evb/runtime";
import { ApiKeyStore, ChainStore, EventFeed, SubscriptionStore, TopicStore } from "@evb/storage";
import type express from "express";
import type { Redis } from "ioredis";
import type pg from "pg";
import type { BuildInfo } from "./admin/build-info.ts";
import type { GatewayConfig } from "./config.ts";
import { HistorySampler, RedisHistory } from "./console/metrics-history.ts";
import type { EventPublisher } from "./events/publish-operation.ts";
import { ReceiptWaiter } from "./events/receipt-waiter.ts";
import { type GatewayChecks, gatewayChecks } from "./health/gateway-checks.ts";
import { type AccessControl, accessControl } from "./http/access-control.ts";
import { buildApp } from "./http/app.ts";
import type { Operation } from "./http/operation.ts";
import { createGatewayServer, type UpgradeHandler } from "./http/server.ts";
import { type MqttService, startMqtt } from "./mqtt/mqtt-service.ts";
import { GatewayMetrics } from "./observability/gateway-metrics.ts";
import { requestObserver } from "./observability/request-observer.ts";
import { mountOpenApi } from "./openapi/openapi-routes.ts";
import type { LiveRecord, LiveSubscriptionSource } from "./stomp/live-subscriptions.ts";
import { MeteredFeed } from "./stomp/metered-feed.ts";
import { type StompService, startStomp, upgradeCaller } from "./stomp/stomp-service.ts";
import type { GatewayTls } from "./tls/gateway-tls.ts";

/**
 * How often the gateway looks at the ledger's identity (one indexed read): the longest it may
 * answer out of a ledger that was replaced under it before it notices.
 */
const LEDGER_GUARD_MS = 500;

/** This gateway's ip:port as the registry lists it: INSTANCE_ADDRESS, else HOST and the port, once it listens. */
class NodeAddress {
  private value: string;
  constructor(configured: string) {
    this.value = configured;
  }
  readonly get = (): string => this.value;
  listening(host: string, port: number): void {
    this.value ||= `${host}:${port}`;
  }
}

/** What the gateway's parts are built from: its settings, its connections and what they all share. */
export interface GatewayCore {
  config: GatewayConfig;
  pool: pg.Pool;
  /** The STOMP and MQTT subscriptions' ledger reads (DATABASE_FEED_POOL_SIZE connections), apart from `pool`. */
  feedPool: pg.Pool;
  redis: Redis;
  /** The pub/sub connection: receipts, block hints and MQTT take-overs arrive on it. */
  subscriber: Redis;
  gatewayId: string;
  groups: ReadonlySet<string>;
  topics: TopicStore;
  /** The one place the wire's branded names are decided (BRAND, protocols.md 8). */
  spelling: Spelling;
  node: NodeAddress;
  logger: Logger;
}

/** The gateway's own parts, around its connections: a fresh id, its groups, topics, spelling and address. */
export function gatewayCore(
  config: GatewayConfig,
  c: { pool: pg.Pool; feedPool: pg.Pool; redis: Redis; subscriber: Redis },
  logger: Logger,
): GatewayCore {
  return {
    config,
    ...c,
    gatewayId: `gw-${randomBytes(6).toString("hex")}`,
    groups: new Set(config.GROUP_IDS),
    topics: new TopicStore(c.pool),
    spelling: new Spelling(config.BRAND),
    node: new NodeAddress(config.INSTANCE_ADDRESS ?? ""),
    logger,
  };
}

/** Where this gateway's publishes learn that they were sealed: the indexers' receipts on its own channel. */
export function receiptWaiter(core: GatewayCore): ReceiptWaiter {
  return new ReceiptWaiter({
    subscriber: core.subscriber,
    channel: redisKeys(core.config.REDIS_PREFIX).receiptChannel(core.gatewayId),
    logger: childLogger(core.logger, { component: "receipts" }),
  });
}

/**
 * The STOMP listing, for the operations that read it: they are built before STOMP starts (STOMP
 * needs their app), so it lists nothing until `attach`.
 */
export class StompListing implements LiveSubscriptionSource {
  private source: LiveSubscriptionSource | undefined;
  attach(source: LiveSubscriptionSource): void {
    this.source = source;
  }
  list(groupId: string): Promise<LiveRecord[]> {
    return this.source?.list(groupId) ?? Promise.resolve([]);
  }
}

/** The log writer that publishes append to, and the metrics that count its batches and read its queue. */
export function meteredLogWriter(kafka: KafkaClient): { metrics: GatewayMetrics; writer: LogWriterCore } {
  // The gauges read the writer at scrape time only, after it exists.
  const metrics = new GatewayMetrics({ waiting: () => writer.waiting, cap: () => writer.cap });
  const writer = createLogWriter(kafka, { onBatch: (n) => metrics.produceBatch(n) });
  return { metrics, writer };
}

/**
 * What readiness reads and answers are guarded by, each started in turn and then looked at in the
 * background: Kafka, the ledger's identity, Postgres and Redis. `close()` stops the Kafka probe,
 * the Postgres and Redis checks, then the ledger guard.
 */
export async function watchGatewayDependencies(o: {
  core: GatewayCore;
  kafka: KafkaClient;
  registry: NodeRegistry;
  receipts: ReceiptWaiter;
}): Promise<{ ledgerGuard: LedgerGuard; checks: GatewayChecks; close(): Promise<void> }> {
  const { config, pool, logger } = o.core;
  // Readiness asks Kafka in the background, never per probe: a Kafka lost shows within the
  // interval plus the timeout (4 s), inside readiness's 5 s goal.
  const kafkaProbe = new KafkaProbe({
    createAdmin: () => metadataAdmin(o.kafka),
    topics: config.GROUP_IDS.map((g) => logTopicName(config.KAFKA_TOPIC_PREFIX, g)),
    intervalMs: 1_000,
    timeoutMs: 3_000,
    onChange: (k) =>
      k.ok
        ? logger.info("Kafka takes publishes again; ready")
        : logger.warn({ reason: k.reason }, "Kafka cannot take publishes; not ready"),
  });
  await kafkaProbe.start();
  // Answers come only from the ledger this gateway served, or one an indexer matched since.
  const ledgerGuard = new LedgerGuard({
    readIdentity: async () => (await pool.query<{ id: string }>("SELECT id FROM ledger_identity")).rows[0]?.id ?? "",
    reports: () => ledgerReports(o.registry, config.GROUP_IDS),
    intervalMs: LEDGER_GUARD_MS,
    logger,
  });
  await ledgerGuard.start();
  // Readiness reads what these found last: a probe never waits on Postgres or Redis.
  const checks = gatewayChecks(config, childLogger(logger, { component: "readiness" }), {
    kafka: () => kafkaProbe.state(),
    ledger: () => ledgerGuard.refusal(),
    publishes: () => o.receipts.progress(),
  });
  await checks.start();
  return {
    ledgerGuard,
    checks,
    close: async () => {
      await kafkaProbe.close();
      await checks.close();
      ledgerGuard.close();
    },
  };
}

/** The express app: the variants' mounts, the console, OpenAPI, `/metrics` and the health paths. */
export function gatewayApp(
  core: GatewayCore,
  o: {
    operations: Operation[];
    access: AccessControl;
    deps: { ledgerGuard: LedgerGuard; checks: GatewayChecks };
    metrics: GatewayMetrics;
    buildInfo: BuildInfo;
  },
): express.Express {
  const { config, logger } = core;
  return buildApp({
    mounts: config.VARIANTS,
    operations: o.operations,
    logger: childLogger(logger, { component: "http" }),
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    trustedProxies: config.TRUSTED_PROXIES,
    access: o.access,
    ledgerRefusal: () => o.deps.ledgerGuard.refusal(),
    spelling: core.spelling,
    consoleAccess: accessControl({ allowed: config.API_ALLOWED_CIDRS, basicUsers: config.API_BASIC_AUTH, logger }),
    observe: requestObserver({
      mounts: config.VARIANTS,
      operations: o.operations,
      metrics: o.metrics,
      logger: childLogger(logger, { component: "http" }),
      accessLog: config.ACCESS_LOG,
    }),
    extra: (a) => {
      mountOpenApi(a, { mounts: config.VARIANTS, operations: o.operations, version: o.buildInfo.eventVersion, logger });
      a.get("/metrics", o.metrics.metrics.handler);
      const health = { check: () => ({ ...o.deps.checks.readiness(), service: "gateway", id: core.gatewayId }) };
      for (const path of HEALTH_PATHS) a.all(path, (req, res) => void answerHealth(health, req, res));
    },
  });
}

/**
 * The sampler of the console's chart history (console/metrics-history.ts): each group's events
 * sealed and callbacks delivered (callbacks' rows plus live STOMP/MQTT counters, as
 * admin/subscriptionStates sums them in the console) and this gateway's publishes answered.
 */
export function consoleHistorySampler(core: GatewayCore, o: { metrics: GatewayMetrics; listing: StompListing }): HistorySampler {
  const { config, pool } = core;
  const chain = new ChainStore(pool);
  const subscriptions = new SubscriptionStore(pool);
  return new HistorySampler({
    port: new RedisHistory(core.redis, config.REDIS_PREFIX),
    groups: config.GROUP_IDS,
    intervalMs: config.CONSOLE_HISTORY_INTERVAL_MS,
    answered: (group) => o.metrics.publishesAnswered(group),
    figures: async (group) => {
      const [totals, rows, live] = await Promise.all([chain.totals(group), subscriptions.listLive(group, null), o.listing.list(group)]);
      const delivered = [...rows, ...live].reduce((n, s) => n + s.delivered, 0);
      return { sealed: totals.transactionCount, delivered };
    },
    now: Date.now,
    logger: childLogger(core.logger, { component: "console-history" }),
  });
}

/**
 * STOMP, then MQTT, started over the one publisher; MQTT shares STOMP's block watch and listing,
 * which the operations' `listing` reads from here on.
 */
export async function startProtocols(
  core: GatewayCore,
  o: {
    publisher: EventPublisher;
    access: AccessControl;
    app: express.Express;
    listing: StompListing;
    tls: GatewayTls | null;
    metrics: GatewayMetrics;
  },
): Promise<{ stomp: StompService; mqtt: MqttService }> {
  const { config } = core;
  const shared = {
    settings: config,
    mounts: config.VARIANTS,
    publisher: o.publisher,
    topics: core.topics,
    // Subscriptions read the ledger from a pool of their own: however many there are, they cannot
    // take the connections HTTP operations answer from (DATABASE_FEED_POOL_SIZE).
    ledger: new MeteredFeed(new EventFeed(core.feedPool), (read) => o.metrics.feedRead(read)),
    groups: core.groups,
    subscriber: core.subscriber,
    redis: core.redis,
    gatewayId: core.gatewayId,
    checks: o.access.checks,
    node: core.node.get,
    spelling: core.spelling,
    logger: core.logger,
  };
  const stomp = await startStomp({ ...shared, app: o.app });
  o.listing.attach(stomp.live);
  const mqtt = await startMqtt({
    ...shared,
    pool: core.pool,
    blocks: stomp.blocks,
    live: stomp.live,
    quota: stomp.quota,
    callerAddress: upgradeCaller(o.app),
    // A client certificate names a key (tls/client-certificate.ts) only where keys are on.
    tls: o.tls?.mqtt(config.API_KEYS ? new ApiKeyStore(core.pool) : undefined),
  });
  return { stomp, mqtt };
}

/** The HTTP server (HTTPS with `tls`), listening on PORT with the upgrades routed to STOMP and MQTT; resolves once it listens. */
export async function listenHttp(
  app: express.Express,
  config: GatewayConfig,
  upgrades: UpgradeHandler,
  tls: GatewayTls | null,
): Promise<{ server: Server | HttpsServer; port: number; url: string }> {
  const server = createGatewayServer(
    app,
    {
      headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      bodyIdleTimeoutMs: config.HTTP_BODY_IDLE_TIMEOUT_MS,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
    },
    upgrades,
    tls?.https(),
  );
  if (tls) tls.attach(server as HttpsServer);
  server.listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `${tls ? "https" : "http"}://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;
  return { server, port, url };
}

/**
 * Stops accepting and lets in-flight requests (publishes waiting for their receipt) finish, but
 * not for longer than `graceMs`: then their connections are closed.
 */
export async function closeHttp(server: Server | HttpsServer, graceMs: number): Promise<void> {
  const force = setTimeout(() => server.closeAllConnections(), graceMs);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  clearTimeout(force);
}
