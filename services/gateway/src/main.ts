import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type Logger, receiptChannel } from "@evb/domain";
import { createKafka, EventLogWriter } from "@evb/eventlog";
import { brokerNodeHeartbeat, NodeRegistry, registryTimings } from "@evb/registry";
import { openPostgres, openRedis, prepareStorage, runService } from "@evb/runtime";
import { ChainStore, DeliveryStore, EventStore, SubscriptionStore, TopicStore } from "@evb/storage";
import { addressPolicy } from "@evb/subscriptions";
import { adminOperations } from "./admin/admin-operations.ts";
import { loadBuildInfo } from "./admin/build-info.ts";
import { type GatewayConfig, loadGatewayConfig } from "./config.ts";
import { getEventOperation } from "./events/get-event-operation.ts";
import { publishOperation } from "./events/publish-operation.ts";
import { ReceiptWaiter } from "./events/receipt-waiter.ts";
import { buildApp } from "./http/app.ts";
import type { Operation } from "./http/operation.ts";
import { createGatewayServer } from "./http/server.ts";
import { mountOpenApi } from "./openapi/openapi-routes.ts";
import { subscriptionOperations } from "./subscriptions/subscription-operations.ts";
import { topicOperations } from "./topics/topic-operations.ts";

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
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
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: "evb-gateway", logger });
  const writer = new EventLogWriter(kafka);

  const gatewayId = `gw-${randomBytes(6).toString("hex")}`;
  const receipts = new ReceiptWaiter({ subscriber, channel: receiptChannel(config.REDIS_PREFIX, gatewayId), logger });
  const groups = new Set(config.GROUP_IDS);
  const topics = new TopicStore(pool);
  const events = new EventStore(pool);
  const now = Date.now;
  const registry = new NodeRegistry({ redis, prefix: config.REDIS_PREFIX });
  let selfAddress = config.INSTANCE_ADDRESS ?? "";

  await prepareStorage(config, pool, kafka, logger);
  await Promise.all([receipts.start(), writer.start()]);

  const buildInfo = loadBuildInfo();
  const operations: Operation[] = [
    ...topicOperations({ topics, groups, now }),
    publishOperation({
      topics,
      groups,
      log: writer,
      receipts,
      gatewayId,
      kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
      publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
      now,
      logger,
    }),
    getEventOperation({ events, groups }),
    ...adminOperations({
      buildInfo,
      groupList: config.GROUP_IDS,
      chain: new ChainStore(pool),
      registry,
      selfAddress: () => selfAddress,
    }),
    ...subscriptionOperations({
      store: new SubscriptionStore(pool),
      deliveries: new DeliveryStore(pool),
      groups,
      policy: addressPolicy(config),
      connectTimeoutMs: config.CALLBACK_CONNECT_TIMEOUT_MS,
      selfAddress: () => selfAddress,
      redis,
      redisPrefix: config.REDIS_PREFIX,
      now,
      logger,
    }),
  ];

  const app = buildApp({
    mounts: config.VARIANTS,
    operations,
    logger,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    trustedProxies: config.TRUSTED_PROXIES,
    access: { allowed: config.API_ALLOWED_CIDRS, basicUsers: config.API_BASIC_AUTH },
    extra: (a) => {
      mountOpenApi(a, { mounts: config.VARIANTS, operations, version: buildInfo.eventVersion, logger });
      a.get("/health", async (_req, res) => {
        const checks = await Promise.allSettled([pool.query("SELECT 1"), redis.ping()]);
        const ok = checks.every((c) => c.status === "fulfilled");
        res.status(ok ? 200 : 503).json({
          status: ok ? "ok" : "degraded",
          service: "gateway",
          id: gatewayId,
          postgres: checks[0].status === "fulfilled",
          redis: checks[1].status === "fulfilled",
        });
      });
    },
  });

  const server = createGatewayServer(app).listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;
  selfAddress ||= `${config.HOST}:${port}`;
  const heartbeat = brokerNodeHeartbeat({ registry, address: selfAddress, role: "gateway", timings, logger });
  await heartbeat.start();
  logger.info({ url, gatewayId, mounts: config.VARIANTS }, "gateway listening");

  let closed: Promise<void> | undefined;
  return {
    url,
    gatewayId,
    close() {
      closed ??= (async () => {
        // Stop accepting; let in-flight publishes get their answer, but not for longer than
        // a publish may wait anyway.
        const force = setTimeout(() => server.closeAllConnections(), config.PUBLISH_TIMEOUT_MS + 1000);
        await new Promise<void>((resolve) => server.close(() => resolve()));
        clearTimeout(force);
        await heartbeat.close();
        await receipts.close();
        await writer.close();
        subscriber.disconnect();
        redis.disconnect();
        await pool.end();
      })();
      return closed;
    },
  };
}

if (import.meta.main) runService("gateway", loadGatewayConfig, startGateway);
