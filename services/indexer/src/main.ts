import type { Logger } from "@evb/domain";
import { ChainLogWriter, LogInspector } from "@evb/eventlog";
import { registryTimings } from "@evb/registry";
import { openKafka, openPostgres, openRedis, prepareStorage, runService } from "@evb/runtime";
import { BlockSealer, ChainRecordStore, LogEpochStore, secretsAtRest } from "@evb/storage";
import type { BlockIndexer } from "./block-indexer.ts";
import { beatAsChainNode, buildBlockIndexer, followChain, watchDependencies } from "./indexer-parts.ts";
import { serveIndexerHealth, watchLedgerAndGauges } from "./indexer-watches.ts";
import { type IndexerConfig, loadIndexerConfig } from "./config.ts";
import { IndexerMetrics } from "./indexer-metrics.ts";

export interface RunningIndexer {
  healthUrl: string;
  metricsUrl: string;
  indexer: BlockIndexer;
  close(): Promise<void>;
}

/** The indexer's composition root. */
export async function startIndexer(config: IndexerConfig, logger: Logger): Promise<RunningIndexer> {
  secretsAtRest(config.SECRETS_KEY, logger);
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
  const { chainTail, chainRecorder } = await followChain(
    config,
    kafka,
    chainLog,
    chainRecords,
    (g, reason) => indexer.fence(g, reason),
    logger,
  );
  const indexer = buildBlockIndexer({
    config,
    kafka,
    pool,
    redis,
    inspector,
    epochs,
    chainRecords,
    chainRecorder,
    sealer,
    metrics,
    logger,
  });
  await indexer.start();

  const watches = watchLedgerAndGauges({ config, pool, inspector, indexer, metrics, logger });
  const deps = await watchDependencies(config, kafka, indexer, logger);
  const health = await serveIndexerHealth(config, indexer, metrics, deps.readiness);
  const healthUrl = health.url;
  const metricsUrl = health.url.replace(/\/health$/, "/metrics");
  const beats = await beatAsChainNode({ config, redis, pool, port: health.port, timings, ...deps, logger });
  logger.info({ healthUrl, metricsUrl, groups: config.GROUP_IDS, sealerIndex: config.SEALER_INDEX }, "indexer running");

  let closed: Promise<void> | undefined;
  return {
    healthUrl,
    metricsUrl,
    indexer,
    close() {
      closed ??= (async () => {
        health.close();
        watches.close();
        await deps.close();
        await beats.close();
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
