import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { childLogger, type Logger, logTopicName, redisKeys, Spelling } from "@evb/domain";
import { ChainLogWriter, createLogWriter } from "@evb/eventlog";
import { brokerNodeHeartbeat, LedgerGuard, NodeRegistry, registryTimings, ledgerReports } from "@evb/registry";
import {
  answerHealth,
  HEALTH_PATHS,
  KafkaProbe,
  metadataAdmin,
  openKafka,
  openPostgres,
  openRedis,
  prepareStorage,
  runService,
} from "@evb/runtime";
import {
  ApiKeyStore,
  ChainStore,
  DeliveryAttemptStore,
  DeliveryStore,
  EventReads,
  ResendStore,
  SubscriptionSettingsStore,
  EventFeed,
  EventStore,
  SubscriptionRecords,
  SubscriptionStore,
  TopicStore,
} from "@evb/storage";
import { addressPolicy } from "@evb/subscriptions";
import { adminOperations } from "./admin/admin-operations.ts";
import { batchOperation } from "./console/batch-operation.ts";
import { subscriptionStatesOperation } from "./console/subscription-states-operation.ts";
import { eventAdminOperations } from "./events/event-admin-operations.ts";
import { loadBuildInfo } from "./admin/build-info.ts";
import { gatewayChecks } from "./health/gateway-checks.ts";
import { type GatewayConfig, loadGatewayConfig } from "./config.ts";
import { getEventOperation } from "./events/get-event-operation.ts";
import { EventPublisher, type PublishDeps, publishOperation } from "./events/publish-operation.ts";
import { ReceiptWaiter } from "./events/receipt-waiter.ts";
import { accessControl } from "./http/access-control.ts";
import { ApiKeyVerifier } from "./http/api-key-verifier.ts";
import { buildApp } from "./http/app.ts";
import type { Operation } from "./http/operation.ts";
import { PublishRateLimiter } from "./http/publish-rate-limit.ts";
import { createGatewayServer } from "./http/server.ts";
import { mountOpenApi } from "./openapi/openapi-routes.ts";
import { GatewayMetrics } from "./observability/gateway-metrics.ts";
import { requestObserver } from "./observability/request-observer.ts";
import type { LiveSubscriptionSource } from "./stomp/live-subscriptions.ts";
import { startStomp, upgradeCaller } from "./stomp/stomp-service.ts";
import { startMqtt, upgradeRoutes } from "./mqtt/mqtt-service.ts";
import { subscriptionOperations } from "./subscriptions/subscription-operations.ts";
import { subscriptionRecorder } from "./subscriptions/subscription-recorder.ts";
import { topicOperations } from "./topics/topic-operations.ts";
import { topicRecorder } from "./topics/topic-recorder.ts";

/**
 * How often the gateway looks at the ledger's identity (one indexed read): the longest it may
 * answer out of a ledger that was replaced under it before it notices.
 */
const LEDGER_GUARD_MS = 500;

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Prometheus metrics, `<url>/metrics`. */
  metricsUrl: string;
  gatewayId: string;
  close(): Promise<void>;
}

/**
 * The gateway's composition root: builds the adapters from config, wires the operations and
 * listens. `close()` stops in reverse order: HTTP first (no new requests), then Kafka, Redis,
 * Postgres.
 */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  const timings = registryTimings(config);
  const pool = openPostgres(config, logger);
  const subscriber = openRedis(config, logger, "subscriber");
  const redis = openRedis(config, logger, "commands");
  const kafka = openKafka(config, "evb-gateway", logger);
  // The gauges read the writer at scrape time only, after it exists.
  const metrics = new GatewayMetrics({ waiting: () => writer.waiting, cap: () => writer.cap });
  const writer = createLogWriter(kafka, { onBatch: (n) => metrics.produceBatch(n) });

  const gatewayId = `gw-${randomBytes(6).toString("hex")}`;
  const receipts = new ReceiptWaiter({
    subscriber,
    channel: redisKeys(config.REDIS_PREFIX).receiptChannel(gatewayId),
    logger: childLogger(logger, { component: "receipts" }),
  });
  const groups = new Set(config.GROUP_IDS);
  const topics = new TopicStore(pool);
  const events = new EventStore(pool);
  const now = Date.now;
  const registry = new NodeRegistry({ redis, prefix: config.REDIS_PREFIX });
  let selfAddress = config.INSTANCE_ADDRESS ?? "";

  await prepareStorage(config, pool, kafka, logger);
  await Promise.all([receipts.start(), writer.start()]);
  // Opened topics are written to the groups' chain topics, which a rebuilt ledger reads.
  const chainLog = new ChainLogWriter(kafka);
  await chainLog.ensureGroupTopics(config.KAFKA_TOPIC_PREFIX, config.GROUP_IDS, config.KAFKA_REPLICATION_FACTOR);
  // Readiness asks Kafka in the background, never per probe: a Kafka lost shows within the
  // interval plus the timeout (4 s), inside readiness's 5 s goal.
  const kafkaProbe = new KafkaProbe({
    createAdmin: () => metadataAdmin(kafka),
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
    reports: () => ledgerReports(registry, config.GROUP_IDS),
    intervalMs: LEDGER_GUARD_MS,
    logger,
  });
  await ledgerGuard.start();
  // Readiness reads what these found last: a probe never waits on Postgres or Redis.
  const checks = gatewayChecks(config, childLogger(logger, { component: "readiness" }), {
    kafka: () => kafkaProbe.state(),
    ledger: () => ledgerGuard.refusal(),
    publishes: () => receipts.progress(),
  });
  await checks.start();

  const buildInfo = loadBuildInfo();
  // The one place the wire's branded names are decided (BRAND, protocols.md 8).
  const spelling = new Spelling(config.BRAND);
  const publishDeps: PublishDeps = {
    topics,
    groups,
    log: writer,
    receipts,
    gatewayId,
    kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
    publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
    idempotencyRetentionMs: config.IDEMPOTENCY_RETENTION_MS,
    now,
    logger: childLogger(logger, { component: "publish" }),
    observe: (group, outcome, seconds) => metrics.publish(group, outcome, seconds),
    spelling,
  };
  // One publisher for HTTP and STOMP: its counter names each publish for the receipt waiter.
  const publisher = new EventPublisher(publishDeps);
  const access = accessControl({
    allowed: config.API_ALLOWED_CIDRS,
    basicUsers: config.API_BASIC_AUTH,
    keys: config.API_KEYS
      ? {
          verifier: new ApiKeyVerifier({ lookup: new ApiKeyStore(pool), cacheMs: config.API_KEY_CACHE_MS, now }),
          limiter: new PublishRateLimiter({ redis, prefix: config.REDIS_PREFIX, logger }),
        }
      : undefined,
    logger,
  });
  // STOMP starts below (it needs the app); listSubscription asks it per call.
  let stompLive: LiveSubscriptionSource | undefined;
  const eventReads = new EventReads(pool, config.DATABASE_QUERY_TIMEOUT_MS);
  const settings = new SubscriptionSettingsStore(pool);
  const operations: Operation[] = [
    ...topicOperations({
      topics,
      groups,
      now,
      recordTopic: topicRecorder({ writer: chainLog, topicPrefix: config.KAFKA_TOPIC_PREFIX, timeoutMs: config.PUBLISH_TIMEOUT_MS }),
    }),
    publishOperation(publishDeps, publisher),
    getEventOperation({ events, groups, spelling }),
    ...eventAdminOperations({ reads: eventReads, groups, spelling }),
    ...adminOperations({
      buildInfo,
      groupList: config.GROUP_IDS,
      chain: new ChainStore(pool),
      registry,
      selfAddress: () => selfAddress,
    }),
    ...subscriptionOperations({
      store: new SubscriptionStore(pool),
      recordSubscription: subscriptionRecorder({
        writer: chainLog,
        records: new SubscriptionRecords(pool),
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        timeoutMs: config.PUBLISH_TIMEOUT_MS,
      }),
      deliveries: new DeliveryStore(pool),
      attemptLog: new DeliveryAttemptStore(pool),
      resends: new ResendStore(pool),
      settings,
      events: eventReads,
      groups,
      policy: addressPolicy(config),
      connectTimeoutMs: config.CALLBACK_CONNECT_TIMEOUT_MS,
      maxPerCaller: config.MAX_SUBSCRIPTIONS_PER_CALLER,
      selfAddress: () => selfAddress,
      redis,
      redisPrefix: config.REDIS_PREFIX,
      now,
      logger: childLogger(logger, { component: "subscriptions" }),
      stomp: { list: (group) => stompLive?.list(group) ?? Promise.resolve([]) },
    }),
  ];
  // What the web console reads: subscription states, and its batched reads over every operation.
  operations.push(
    subscriptionStatesOperation({
      store: new SubscriptionStore(pool),
      paused: (ids) => settings.pausedOf(ids),
      stomp: { list: (group) => stompLive?.list(group) ?? Promise.resolve([]) },
      groups,
    }),
    batchOperation({ operations, access, logger: childLogger(logger, { component: "http" }) }),
  );

  const app = buildApp({
    mounts: config.VARIANTS,
    operations,
    logger: childLogger(logger, { component: "http" }),
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    trustedProxies: config.TRUSTED_PROXIES,
    access,
    ledgerRefusal: () => ledgerGuard.refusal(),
    consoleAccess: accessControl({ allowed: config.API_ALLOWED_CIDRS, basicUsers: config.API_BASIC_AUTH, logger }),
    observe: requestObserver({
      mounts: config.VARIANTS,
      operations,
      metrics,
      logger: childLogger(logger, { component: "http" }),
      accessLog: config.ACCESS_LOG,
    }),
    extra: (a) => {
      mountOpenApi(a, { mounts: config.VARIANTS, operations, version: buildInfo.eventVersion, logger });
      a.get("/metrics", metrics.metrics.handler);
      const health = { check: () => ({ ...checks.readiness(), service: "gateway", id: gatewayId }) };
      for (const path of HEALTH_PATHS) a.all(path, (req, res) => void answerHealth(health, req, res));
    },
  });

  const feed = new EventFeed(pool);
  const stomp = await startStomp({
    settings: config,
    mounts: config.VARIANTS,
    publisher,
    topics,
    ledger: feed,
    groups,
    subscriber,
    redis,
    gatewayId,
    checks: access.checks,
    node: () => selfAddress,
    app,
    spelling,
    logger,
  });
  stompLive = stomp.live;
  // MQTT shares STOMP's block watch and listing, and the one publisher.
  const mqtt = await startMqtt({
    settings: config,
    mounts: config.VARIANTS,
    publisher,
    topics,
    ledger: feed,
    groups,
    blocks: stomp.blocks,
    live: stomp.live,
    redis,
    subscriber,
    gatewayId,
    checks: access.checks,
    node: () => selfAddress,
    callerAddress: upgradeCaller(app),
    spelling,
    logger,
  });
  const server = createGatewayServer(
    app,
    {
      headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      bodyIdleTimeoutMs: config.HTTP_BODY_IDLE_TIMEOUT_MS,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
    },
    upgradeRoutes(stomp.upgrades, mqtt.upgrades),
  ).listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;
  selfAddress ||= `${config.HOST}:${port}`;
  const heartbeat = brokerNodeHeartbeat({ registry, address: selfAddress, role: "gateway", timings, logger });
  await heartbeat.start();
  const metricsUrl = `${url}/metrics`;
  logger.info({ url, metricsUrl, gatewayId, mounts: config.VARIANTS, mqttPort: mqtt.port }, "gateway listening");

  let closed: Promise<void> | undefined;
  return {
    url,
    metricsUrl,
    gatewayId,
    close() {
      closed ??= (async () => {
        // Stop accepting; let in-flight publishes get their answer, but not for longer than
        // a publish may wait anyway.
        // WebSocket connections are not HTTP ones: server.close would wait for them.
        await mqtt.close();
        await stomp.close();
        const force = setTimeout(() => server.closeAllConnections(), config.PUBLISH_TIMEOUT_MS + 1000);
        await new Promise<void>((resolve) => server.close(() => resolve()));
        clearTimeout(force);
        await heartbeat.close();
        await kafkaProbe.close();
        await checks.close();
        ledgerGuard.close();
        await receipts.close();
        await writer.close();
        await chainLog.close();
        subscriber.disconnect();
        redis.disconnect();
        await pool.end();
      })();
      return closed;
    },
  };
}

if (import.meta.main) runService("gateway", loadGatewayConfig, startGateway);
