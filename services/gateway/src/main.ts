import { childLogger, type Logger } from "@evb/domain";
import { ChainLogWriter } from "@evb/eventlog";
import { brokerNodeHeartbeat, NodeRegistry, registryTimings } from "@evb/registry";
import { openKafka, openPostgres, openRedis, prepareStorage, runService } from "@evb/runtime";
import { secretsAtRest } from "@evb/storage";
import { loadBuildInfo } from "./admin/build-info.ts";
import { type GatewayConfig, loadGatewayConfig } from "./config.ts";
import {
  closeHttp,
  consoleHistorySampler,
  gatewayApp,
  gatewayCore,
  listenHttp,
  meteredLogWriter,
  receiptWaiter,
  StompListing,
  startProtocols,
  watchGatewayDependencies,
} from "./gateway-parts.ts";
import { gatewayOperations } from "./gateway-operations.ts";
import { upgradeRoutes } from "./mqtt/mqtt-service.ts";
import { GatewayTls } from "./tls/gateway-tls.ts";

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
  secretsAtRest(config.SECRETS_KEY, logger);
  // First: a certificate or key that cannot serve fails the start before anything is opened.
  const tls = GatewayTls.fromSettings(config, childLogger(logger, { component: "tls" }));
  const timings = registryTimings(config);
  const pool = openPostgres(config, logger);
  const feedPool = openPostgres({ ...config, DATABASE_POOL_SIZE: config.DATABASE_FEED_POOL_SIZE }, logger);
  const subscriber = openRedis(config, logger, "subscriber");
  const redis = openRedis(config, logger, "commands");
  const kafka = openKafka(config, "evb-gateway", logger);
  const { metrics, writer } = meteredLogWriter(kafka);
  const core = gatewayCore(config, { pool, feedPool, redis, subscriber }, logger);
  const receipts = receiptWaiter(core);
  const registry = new NodeRegistry({ redis, prefix: config.REDIS_PREFIX });

  await prepareStorage(config, pool, kafka, logger);
  await Promise.all([receipts.start(), writer.start()]);
  // Opened topics are written to the groups' chain topics, which a rebuilt ledger reads.
  const chainLog = new ChainLogWriter(kafka);
  await chainLog.ensureGroupTopics(config.KAFKA_TOPIC_PREFIX, config.GROUP_IDS, config.KAFKA_REPLICATION_FACTOR);
  const deps = await watchGatewayDependencies({ core, kafka, registry, receipts });

  const buildInfo = loadBuildInfo();
  // STOMP starts below (it needs the app); listSubscription and the console read its listing.
  const listing = new StompListing();
  const parts = { writer, receipts, chainLog, registry, metrics, buildInfo, listing };
  const { operations, publisher, access } = gatewayOperations(core, parts);
  const app = gatewayApp(core, { operations, access, deps, metrics, buildInfo });
  const { stomp, mqtt } = await startProtocols(core, { publisher, access, app, listing, tls, metrics });
  const { server, port, url } = await listenHttp(app, config, upgradeRoutes(stomp.upgrades, mqtt.upgrades), tls);
  tls?.start();
  core.node.listening(config.HOST, port);
  const heartbeat = brokerNodeHeartbeat({ registry, address: core.node.get(), role: "gateway", timings, logger });
  await heartbeat.start();
  // Best effort: a Redis or Postgres outage skips samples, never delays start or readiness.
  const history = consoleHistorySampler(core, { metrics, listing });
  history.start();
  const metricsUrl = `${url}/metrics`;
  logger.info(
    { url, metricsUrl, gatewayId: core.gatewayId, mounts: config.VARIANTS, mqttPort: mqtt.port, mqttTlsPort: mqtt.tlsPort },
    "gateway listening",
  );

  let closed: Promise<void> | undefined;
  return {
    url,
    metricsUrl,
    gatewayId: core.gatewayId,
    close() {
      closed ??= (async () => {
        // WebSocket connections are not HTTP ones: server.close would wait for them.
        tls?.close();
        await mqtt.close();
        await stomp.close();
        // In-flight publishes get their answer, but not for longer than a publish may wait anyway.
        await closeHttp(server, config.PUBLISH_TIMEOUT_MS + 1000);
        await heartbeat.close();
        await history.close();
        await deps.close();
        await receipts.close();
        await writer.close();
        await chainLog.close();
        subscriber.disconnect();
        redis.disconnect();
        await Promise.all([pool.end(), feedPool.end()]);
      })();
      return closed;
    },
  };
}

if (import.meta.main) runService("gateway", loadGatewayConfig, startGateway);
