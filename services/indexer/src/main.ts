import { chainTopicName, childLogger, type Logger, logTopicName, subscriptionsTopicName, TIMED_OUT, withTimeout } from "@evb/domain";
import { ChainLogWriter, ChainTail, LogInspector } from "@evb/eventlog";
import { chainNodeHeartbeat, NodeRegistry, registryTimings } from "@evb/registry";
import {
  KafkaProbe,
  metadataAdmin,
  openKafka,
  openPostgres,
  openRedis,
  postgresCheck,
  prepareStorage,
  runService,
  serveHealth,
} from "@evb/runtime";
import {
  BlockSealer,
  ChainRecordStore,
  ChainStore,
  LogEpochStore,
  ledgerGaugeValues,
  readFenceReading,
  readLedgerFence,
  SubscriptionRecords,
  TopicStore,
} from "@evb/storage";
import { BlockIndexer } from "./block-indexer.ts";
import { ChainRecorder } from "./chain-recorder.ts";
import { kafkaConsumers } from "./kafka-consumer.ts";
import { rebuildFromChain } from "./ledger-rebuild.ts";
import { watchLedger } from "./ledger-watch.ts";
import { restoreSubscriptions } from "./subscription-rebuild.ts";
import { resolveLogEpoch } from "./log-epochs.ts";
import type { Ledger, LogMatcher } from "./ports.ts";
import { redisReceipts } from "./receipt-publisher.ts";
import { type IndexerConfig, loadIndexerConfig } from "./config.ts";
import { IndexerMetrics } from "./indexer-metrics.ts";

/** The longest one look of the ledger watch, or a heartbeat's read of a group's height, waits for the ledger (ms). */
const LEDGER_CHECK_MS = 800;

/** How often an idle indexer looks whether the ledger under it was replaced (ms): one indexed read per group. */
const LEDGER_WATCH_MS = 1_000;

export interface RunningIndexer {
  healthUrl: string;
  metricsUrl: string;
  indexer: BlockIndexer;
  close(): Promise<void>;
}

/** The indexer's composition root. */
export async function startIndexer(config: IndexerConfig, logger: Logger): Promise<RunningIndexer> {
  const timings = registryTimings(config);
  const pool = openPostgres(config, logger);
  const redis = openRedis(config, logger, "commands");
  const kafka = openKafka(config, `evb-indexer-${config.SEALER_INDEX}`, logger);
  await prepareStorage(config, pool, kafka, logger);
  const inspector = new LogInspector({ kafka });
  const chainLog = new ChainLogWriter(kafka);
  await chainLog.ensureGroupTopics(config.KAFKA_TOPIC_PREFIX, config.GROUP_IDS, config.KAFKA_REPLICATION_FACTOR);
  const metrics = new IndexerMetrics(config.GROUP_IDS);
  const sealer = new BlockSealer({ pool, sealer: { index: config.SEALER_INDEX } });
  const epochs = new LogEpochStore(pool);
  const chainRecords = new ChainRecordStore(pool);
  // What each group's chain topic holds, followed from its start: no write gives a height a second record.
  const chainTail = new ChainTail({
    kafka,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    groups: config.GROUP_IDS,
    logger: childLogger(logger, { component: "chain-tail" }),
  });
  await chainTail.start();
  const chainRecorder = new ChainRecorder({
    writer: chainLog,
    tail: chainTail,
    onRefuse: (groupId, reason) => indexer.fence(groupId, reason),
    store: chainRecords,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    logger,
    now: Date.now,
  });
  const consumerLogger = childLogger(logger, { component: "consumer" });
  const measuredSealer = metrics.measure(sealer, childLogger(logger, { component: "sealer" }));
  const ledger: Ledger = {
    seal: (g, e, records, fence) => measuredSealer.seal(g, e, records, { fence }),
    positions: (g, e) => epochs.positions(g, e),
  };
  const matcher: LogMatcher = {
    match: async (groupId, logTopic) => {
      const rebuilt = await rebuildFromChain({
        kafka,
        groupId,
        logTopic,
        chainTopic: chainTopicName(config.KAFKA_TOPIC_PREFIX, groupId),
        inspector,
        epochs,
        chain: new ChainStore(pool),
        chainRecords,
        sealer,
        topics: new TopicStore(pool),
        logger,
        now: Date.now,
      });
      if (!rebuilt.ok) {
        // Named in the heartbeat, so that no gateway or notifier serves it either, even one started on it.
        const foreignLedger = rebuilt.foreign ? (await readLedgerFence(pool, groupId))?.identity : undefined;
        return { ok: false, reason: rebuilt.reason, ...(foreignLedger ? { foreignLedger } : {}) };
      }
      await restoreSubscriptions({
        kafka,
        groupId,
        topic: subscriptionsTopicName(config.KAFKA_TOPIC_PREFIX, groupId),
        inspector,
        records: new SubscriptionRecords(pool),
        logger,
      });
      const matched = await resolveLogEpoch({
        groupId,
        topic: logTopic,
        consumerGroup: config.KAFKA_CONSUMER_GROUP,
        inspector,
        store: epochs,
        logger: consumerLogger,
        now: Date.now,
      });
      if (!matched.ok) return matched;
      // Read after the rebuild: every seal from here on must stand on this ledger and this head.
      const fence = await readLedgerFence(pool, groupId);
      if (!fence) return { ok: false, reason: `group ${groupId}: the ledger has no identity (migration 018 not applied?)` };
      return { ...matched, fence };
    },
  };
  const indexer = new BlockIndexer({
    consumers: kafkaConsumers(kafka),
    ledger,
    matcher,
    logStarts: { logStart: async (topic, p) => (await inspector.offsets(topic)).find((o) => o.partition === p)?.low ?? 0 },
    chain: chainRecorder,
    receipts: redisReceipts(redis, config.REDIS_PREFIX, consumerLogger),
    groups: config.GROUP_IDS,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    consumerGroup: config.KAFKA_CONSUMER_GROUP,
    maxBatchBytes: config.MAX_BATCH_BYTES,
    // Every partition of a fetch at once, so that they are sealed in one block.
    partitionsPerFetch: Math.min(64, config.KAFKA_PARTITIONS * config.GROUP_IDS.length),
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    readyMaxLag: config.READY_MAX_LAG_RECORDS,
    logger: consumerLogger,
    timings: (stage, seconds) => metrics.stage(stage, seconds),
    onFatal: (err) => {
      logger.error({ err: err.message }, "indexing stopped; exiting so that a supervisor restarts this indexer");
      process.exit(1);
    },
  });
  await indexer.start();

  metrics.watchRefusals(() => indexer.refusedGroups);
  const gauges = metrics.poll(
    {
      intervalMs: config.METRICS_POLL_MS,
      groups: config.GROUP_IDS,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      offsets: (topic) => inspector.offsets(topic),
      read: () => ledgerGaugeValues(pool),
    },
    childLogger(logger, { component: "metrics" }),
  );
  // Kafka as the indexer needs it (its log topics to read, its chain topics to write), asked in
  // the background so that a probe never waits on a silent broker.
  const kafkaProbe = new KafkaProbe({
    createAdmin: () => metadataAdmin(kafka),
    topics: config.GROUP_IDS.flatMap((g) => [logTopicName(config.KAFKA_TOPIC_PREFIX, g), chainTopicName(config.KAFKA_TOPIC_PREFIX, g)]),
    intervalMs: 1_000,
    timeoutMs: 3_000,
    onChange: (k) => {
      if (!k.ok) return logger.warn({ reason: k.reason }, "Kafka unreachable; not ready");
      logger.info("Kafka reachable again");
      indexer.retryNow();
    },
  });
  await kafkaProbe.start();
  const ledgerWatch = watchLedger({
    groups: config.GROUP_IDS,
    fenceOf: (g) => indexer.fenceOf(g),
    read: (g, height) => readFenceReading(pool, g, height),
    fence: (g, reason) => indexer.fence(g, reason),
    intervalMs: LEDGER_WATCH_MS,
    timeoutMs: LEDGER_CHECK_MS,
    logger,
  });
  // The ledger as the seals need it: its tables there (a dropped schema fails this), looked at in
  // the background on a pool of its own, read by the health probe and the heartbeat. A probe thus
  // answers at once whatever is down; a silent Postgres counts as not answering within 1 s.
  const ledgerLook = postgresCheck(config, childLogger(logger, { component: "readiness" }), {
    name: "the ledger",
    sql: "SELECT 1 FROM ledger_identity",
    onChange: (c) => c.ok && indexer.retryNow(),
  });
  await ledgerLook.start();
  const ledgerProblem = (): string | null => {
    const c = ledgerLook.state();
    if (!c.ok) return `the ledger does not answer (${c.reason})`;
    indexer.ledgerAnswered(c.at);
    return null;
  };
  /** What the gateways are told about this indexer and a group (and what readiness adds lag to). */
  const canSeal = (groupId: string): { ready: boolean; reason?: string; ledger?: string; foreignLedger?: string } => {
    const k = kafkaProbe.state();
    if (!k.ok) return { ready: false, reason: k.reason ?? "Kafka unreachable" };
    const db = ledgerProblem();
    if (db !== null) return { ready: false, reason: db };
    return indexer.canSeal(groupId);
  };
  const health = await serveHealth({
    host: config.HOST,
    port: config.HEALTH_PORT,
    routes: { "/metrics": metrics.metrics.handler },
    // Ready: the ledger and Kafka answer and the indexer seals (no log refused, the last seal not
    // failed, none stuck, not far behind).
    check: () => {
      const db = ledgerProblem();
      const k = kafkaProbe.state();
      const r = indexer.readiness();
      const reason = db ?? (k.ok ? r.reason : k.reason);
      return {
        ok: db === null && k.ok && r.ready,
        ...(reason ? { reason } : {}),
        service: "indexer",
        sealerIndex: config.SEALER_INDEX,
        sealedBlocks: indexer.sealedBlocks,
        consumerRestarts: indexer.consumerRestarts,
      };
    },
  });
  const healthUrl = health.url;
  const metricsUrl = health.url.replace(/\/health$/, "/metrics");
  // Listed as a chain node (node/nodeList, group/general, blockchaininfo) while it beats.
  const chain = new ChainStore(pool);
  const heartbeat = chainNodeHeartbeat({
    registry: new NodeRegistry({ redis, prefix: config.REDIS_PREFIX }),
    groups: config.GROUP_IDS,
    sealerIndex: config.SEALER_INDEX,
    address: config.INSTANCE_ADDRESS ?? `${config.HOST}:${health.port}`,
    // A beat carries "cannot seal" to the gateways: it must not wait on a silent ledger.
    blockNumber: async (g) => {
      const db = ledgerProblem();
      if (db !== null) throw new Error(db);
      const totals = await withTimeout(chain.totals(g), LEDGER_CHECK_MS);
      if (totals === TIMED_OUT) throw new Error(`the ledger did not answer within ${LEDGER_CHECK_MS} ms`);
      return totals.latestBlock;
    },
    canSeal,
    timings,
    logger,
  });
  await heartbeat.start();
  // Redis back after an outage: beat now rather than at the next retry, since the gateways'
  // readiness waits for this beat (its entry went stale while Redis was away).
  redis.on("ready", () => heartbeat.beatSoon());
  // A change of what the heartbeat says (a group refused or fenced, sealing again) is beaten at
  // once: the gateways' readiness follows within a probe, not a heartbeat interval later.
  let sealable = "";
  const watchSealable = setInterval(() => {
    const now = config.GROUP_IDS.map((g) => {
      const can = canSeal(g);
      return `${can.ready}/${can.ledger ?? ""}`;
    }).join();
    if (now === sealable) return;
    sealable = now;
    heartbeat.beatSoon();
  }, 250);
  watchSealable.unref();
  logger.info({ healthUrl, metricsUrl, groups: config.GROUP_IDS, sealerIndex: config.SEALER_INDEX }, "indexer running");

  let closed: Promise<void> | undefined;
  return {
    healthUrl,
    metricsUrl,
    indexer,
    close() {
      closed ??= (async () => {
        clearInterval(watchSealable);
        health.close();
        gauges.close();
        ledgerWatch.close();
        await ledgerLook.close();
        await kafkaProbe.close();
        await heartbeat.close();
        await indexer.close();
        await chainTail.close();
        await inspector.close();
        await chainLog.close();
        redis.disconnect();
        await pool.end();
      })();
      return closed;
    },
  };
}

if (import.meta.main) runService("indexer", loadIndexerConfig, startIndexer, (c) => ({ sealerIndex: c.SEALER_INDEX }));
