import type { Logger } from "@evb/domain";
import { createKafka } from "@evb/eventlog";
import { chainNodeHeartbeat, NodeRegistry, registryTimings } from "@evb/registry";
import { openPostgres, openRedis, prepareStorage, runService, serveHealth } from "@evb/runtime";
import { BlockSealer, ChainStore } from "@evb/storage";
import { BlockIndexer } from "./block-indexer.ts";
import { type IndexerConfig, loadIndexerConfig } from "./config.ts";

export interface RunningIndexer {
  healthUrl: string;
  indexer: BlockIndexer;
  close(): Promise<void>;
}

/** The indexer's composition root. */
export async function startIndexer(config: IndexerConfig, logger: Logger): Promise<RunningIndexer> {
  const timings = registryTimings(config);
  const pool = openPostgres(config, logger);
  const redis = openRedis(config, logger, "commands");
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `evb-indexer-${config.SEALER_INDEX}`, logger });
  await prepareStorage(config, pool, kafka, logger);
  const indexer = new BlockIndexer({
    kafka,
    sealer: new BlockSealer({
      pool,
      sealer: { index: config.SEALER_INDEX },
      onGap: (gap) =>
        logger.error(
          gap,
          "Kafka log records were deleted before they were indexed (check the log topics' retention.ms and why indexing fell behind)",
        ),
    }),
    redis,
    groups: config.GROUP_IDS,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    redisPrefix: config.REDIS_PREFIX,
    consumerGroup: config.KAFKA_CONSUMER_GROUP,
    maxBatchBytes: config.MAX_BATCH_BYTES,
    logger,
    onFatal: (err) => {
      logger.error({ err: err.message }, "indexing stopped; exiting so that a supervisor restarts this indexer");
      process.exit(1);
    },
  });
  await indexer.start();

  const health = await serveHealth({
    host: config.HOST,
    port: config.HEALTH_PORT,
    check: async () => ({
      ok: await pool.query("SELECT 1").then(
        () => true,
        () => false,
      ),
      service: "indexer",
      sealerIndex: config.SEALER_INDEX,
      sealedBlocks: indexer.sealedBlocks,
    }),
  });
  const healthUrl = health.url;
  // Listed as a chain node (node/nodeList, group/general, blockchaininfo) while it beats.
  const chain = new ChainStore(pool);
  const heartbeat = chainNodeHeartbeat({
    registry: new NodeRegistry({ redis, prefix: config.REDIS_PREFIX }),
    groups: config.GROUP_IDS,
    sealerIndex: config.SEALER_INDEX,
    address: config.INSTANCE_ADDRESS ?? `${config.HOST}:${health.port}`,
    blockNumber: async (g) => (await chain.totals(g)).latestBlock,
    timings,
    logger,
  });
  await heartbeat.start();
  logger.info({ healthUrl, groups: config.GROUP_IDS, sealerIndex: config.SEALER_INDEX }, "indexer running");

  let closed: Promise<void> | undefined;
  return {
    healthUrl,
    indexer,
    close() {
      closed ??= (async () => {
        health.close();
        await heartbeat.close();
        await indexer.close();
        redis.disconnect();
        await pool.end();
      })();
      return closed;
    },
  };
}

if (import.meta.main) runService("indexer", loadIndexerConfig, startIndexer, (c) => ({ sealerIndex: c.SEALER_INDEX }));
