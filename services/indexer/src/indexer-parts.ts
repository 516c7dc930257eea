import { chainTopicName, childLogger, type Logger, logTopicName, subscriptionsTopicName, TIMED_OUT, withTimeout } from "@evb/domain";
import { type ChainLogWriter, ChainTail, type KafkaClient, type LogInspector } from "@evb/eventlog";
import { chainNodeHeartbeat, NodeRegistry, type RegistryTimings } from "@evb/registry";
import { KafkaProbe, metadataAdmin, postgresCheck } from "@evb/runtime";
import {
  type BlockSealer,
  type ChainRecordStore,
  ChainStore,
  type LogEpochStore,
  readLedgerFence,
  SubscriptionRecords,
  TopicStore,
} from "@evb/storage";
import type pg from "pg";
import type { Redis } from "ioredis";
import { BlockIndexer } from "./block-indexer.ts";
import { ChainRecorder } from "./chain-recorder.ts";
import type { IndexerMetrics } from "./indexer-metrics.ts";
import { kafkaConsumers } from "./kafka-consumer.ts";
import { RedisReceipts } from "./receipt-publisher.ts";
import type { IndexerConfig } from "./config.ts";
import { rebuildFromChain } from "./ledger-rebuild.ts";
import { resolveLogEpoch } from "./log-epochs.ts";
import type { Ledger, LogMatcher } from "./ports.ts";
import { restoreSubscriptions } from "./subscription-rebuild.ts";

/** The longest a heartbeat's read of a group's height waits for the ledger (ms). */
export const LEDGER_CHECK_MS = 800;

/**
 * How each group's log is matched to the ledger: the ledger rebuilt from the chain topic where
 * it lacks blocks (or refused: a foreign ledger is named so no gateway serves it), subscriptions
 * restored, the log's epoch resolved, then the ledger's fence read (every later seal stands on it).
 */
function ledgerMatcher(o: {
  config: IndexerConfig;
  kafka: KafkaClient;
  pool: pg.Pool;
  inspector: LogInspector;
  epochs: LogEpochStore;
  chainRecords: ChainRecordStore;
  sealer: BlockSealer;
  logger: Logger;
  consumerLogger: Logger;
}): LogMatcher {
  const { config, kafka, pool, inspector, epochs, logger } = o;
  return {
    match: async (groupId, logTopic) => {
      const rebuilt = await rebuildFromChain({
        kafka,
        groupId,
        logTopic,
        chainTopic: chainTopicName(config.KAFKA_TOPIC_PREFIX, groupId),
        inspector,
        epochs,
        chain: new ChainStore(pool),
        chainRecords: o.chainRecords,
        sealer: o.sealer,
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
        logger: o.consumerLogger,
        now: Date.now,
      });
      if (!matched.ok) return matched;
      // Read after the rebuild: every seal from here on must stand on this ledger and this head.
      const fence = await readLedgerFence(pool, groupId);
      if (!fence) return { ok: false, reason: `group ${groupId}: the ledger has no identity (migration 018 not applied?)` };
      return { ...matched, fence };
    },
  };
}

/**
 * What each group's chain topic holds, followed from its start (no write gives a height a second
 * record), and the recorder that writes the sealed blocks' records there; a refused write fences the group.
 */
export async function followChain(
  config: IndexerConfig,
  kafka: KafkaClient,
  writer: ChainLogWriter,
  store: ChainRecordStore,
  fence: (groupId: string, reason: string) => void,
  logger: Logger,
): Promise<{ chainTail: ChainTail; chainRecorder: ChainRecorder }> {
  const chainTail = new ChainTail({
    kafka,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    groups: config.GROUP_IDS,
    logger: childLogger(logger, { component: "chain-tail" }),
  });
  await chainTail.start();
  const chainRecorder = new ChainRecorder({
    writer,
    tail: chainTail,
    onRefuse: fence,
    store,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    logger,
    now: Date.now,
  });
  return { chainTail, chainRecorder };
}

/** The block indexer over this deployment's Kafka, ledger and Redis, as its settings say. */
export function buildBlockIndexer(o: {
  config: IndexerConfig;
  kafka: KafkaClient;
  pool: pg.Pool;
  redis: Redis;
  inspector: LogInspector;
  epochs: LogEpochStore;
  chainRecords: ChainRecordStore;
  chainRecorder: ChainRecorder;
  sealer: BlockSealer;
  metrics: IndexerMetrics;
  logger: Logger;
}): BlockIndexer {
  const { config, inspector, metrics, logger } = o;
  const consumerLogger = childLogger(logger, { component: "consumer" });
  const measuredSealer = metrics.measure(o.sealer, childLogger(logger, { component: "sealer" }));
  const ledger: Ledger = {
    seal: (g, e, records, fence) => measuredSealer.seal(g, e, records, { fence }),
    positions: (g, e) => o.epochs.positions(g, e),
  };
  return new BlockIndexer({
    consumers: kafkaConsumers(o.kafka),
    ledger,
    matcher: ledgerMatcher({ ...o, consumerLogger }),
    logStarts: { logStart: async (topic, p) => (await inspector.offsets(topic)).find((x) => x.partition === p)?.low ?? 0 },
    chain: o.chainRecorder,
    receipts: new RedisReceipts(o.redis, config.REDIS_PREFIX, consumerLogger),
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
      logger.error({ err }, "indexing stopped; exiting so that a supervisor restarts this indexer");
      process.exit(1);
    },
  });
}

/** What the gateways are told about this indexer and a group (and what readiness adds lag to). */
export type CanSeal = (groupId: string) => { ready: boolean; reason?: string; ledger?: string; foreignLedger?: string };

/**
 * Kafka (its log topics to read, its chain topics to write) and the ledger (its tables there; a
 * dropped schema fails this) as the seals need them, each asked in the background so that a
 * probe or a heartbeat never waits on a silent peer; either answering again ends a consumer
 * re-join's backoff, and the ledger answering clears an older seal failure.
 */
export async function watchDependencies(config: IndexerConfig, kafka: KafkaClient, indexer: BlockIndexer, logger: Logger) {
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
  // A silent Postgres counts as not answering within 1 s.
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
  const canSeal: CanSeal = (groupId) => {
    const k = kafkaProbe.state();
    if (!k.ok) return { ready: false, reason: k.reason ?? "Kafka unreachable" };
    const db = ledgerProblem();
    if (db !== null) return { ready: false, reason: db };
    return indexer.canSeal(groupId);
  };
  /** Ready: the ledger and Kafka answer and the indexer seals (no log refused, the last seal not failed, none stuck, not far behind). */
  const readiness = (): { ok: boolean; reason?: string } => {
    const db = ledgerProblem();
    const k = kafkaProbe.state();
    const r = indexer.readiness();
    const reason = db ?? (k.ok ? r.reason : k.reason);
    return { ok: db === null && k.ok && r.ready, ...(reason ? { reason } : {}) };
  };
  return {
    ledgerProblem,
    canSeal,
    readiness,
    close: async () => {
      await ledgerLook.close();
      await kafkaProbe.close();
    },
  };
}

/**
 * Listed as a chain node (node/nodeList, group/general, blockchaininfo) while it beats; a beat
 * carries "cannot seal" to the gateways and never waits on a silent ledger. What it says is
 * beaten at once when it changes (a group refused or fenced, sealing again), and when Redis is
 * back after an outage (the gateways' readiness waits for this beat: the entry went stale).
 */
export async function beatAsChainNode(o: {
  config: IndexerConfig;
  redis: Redis;
  pool: pg.Pool;
  port: number;
  timings: RegistryTimings;
  ledgerProblem: () => string | null;
  canSeal: CanSeal;
  logger: Logger;
}): Promise<{ close(): Promise<void> }> {
  const { config } = o;
  const chain = new ChainStore(o.pool);
  const heartbeat = chainNodeHeartbeat({
    registry: new NodeRegistry({ redis: o.redis, prefix: config.REDIS_PREFIX }),
    groups: config.GROUP_IDS,
    sealerIndex: config.SEALER_INDEX,
    address: config.INSTANCE_ADDRESS ?? `${config.HOST}:${o.port}`,
    blockNumber: async (g) => {
      const db = o.ledgerProblem();
      if (db !== null) throw new Error(db);
      const totals = await withTimeout(chain.totals(g), LEDGER_CHECK_MS);
      if (totals === TIMED_OUT) throw new Error(`the ledger did not answer within ${LEDGER_CHECK_MS} ms`);
      return totals.latestBlock;
    },
    canSeal: o.canSeal,
    timings: o.timings,
    logger: o.logger,
  });
  await heartbeat.start();
  o.redis.on("ready", () => heartbeat.beatSoon());
  let sealable = "";
  const watchSealable = setInterval(() => {
    const now = config.GROUP_IDS.map((g) => {
      const can = o.canSeal(g);
      return `${can.ready}/${can.ledger ?? ""}`;
    }).join();
    if (now === sealable) return;
    sealable = now;
    heartbeat.beatSoon();
  }, 250);
  watchSealable.unref();
  return {
    close: async () => {
      clearInterval(watchSealable);
      await heartbeat.close();
    },
  };
}
