import { childLogger, type Logger } from "@evb/domain";
import type { LogInspector } from "@evb/eventlog";
import { serveHealth } from "@evb/runtime";
import { ledgerGaugeValues, readFenceReading } from "@evb/storage";
import type pg from "pg";
import type { BlockIndexer } from "./block-indexer.ts";
import type { IndexerConfig } from "./config.ts";
import type { IndexerMetrics } from "./indexer-metrics.ts";
import { LEDGER_CHECK_MS } from "./indexer-parts.ts";
import { watchLedger } from "./ledger-watch.ts";

/** How often an idle indexer looks whether the ledger under it was replaced (ms): one indexed read per group. */
const LEDGER_WATCH_MS = 1_000;

/**
 * The indexer's background looks at the ledger: whether the ledger under a group was replaced
 * (dropped, restored: the group is fenced and matched again) and the gauges (heights, lag).
 */
export function watchLedgerAndGauges(o: {
  config: IndexerConfig;
  pool: pg.Pool;
  inspector: LogInspector;
  indexer: BlockIndexer;
  metrics: IndexerMetrics;
  logger: Logger;
}): { close(): void } {
  const { config, pool, indexer, metrics } = o;
  metrics.watchRefusals(() => indexer.refusedGroups);
  const gauges = metrics.poll(
    {
      intervalMs: config.METRICS_POLL_MS,
      groups: config.GROUP_IDS,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      offsets: (topic) => o.inspector.offsets(topic),
      read: () => ledgerGaugeValues(pool),
    },
    childLogger(o.logger, { component: "metrics" }),
  );
  const ledgerWatch = watchLedger({
    groups: config.GROUP_IDS,
    fenceOf: (g) => indexer.fenceOf(g),
    read: (g, height) => readFenceReading(pool, g, height),
    fence: (g, reason) => indexer.fence(g, reason),
    intervalMs: LEDGER_WATCH_MS,
    timeoutMs: LEDGER_CHECK_MS,
    logger: o.logger,
  });
  return {
    close() {
      gauges.close();
      ledgerWatch.close();
    },
  };
}

/** /health (readiness from the dependency watch, plus the indexer's counts) and /metrics. */
export function serveIndexerHealth(
  config: IndexerConfig,
  indexer: BlockIndexer,
  metrics: IndexerMetrics,
  readiness: () => { ok: boolean; reason?: string },
) {
  return serveHealth({
    host: config.HOST,
    port: config.HEALTH_PORT,
    routes: { "/metrics": metrics.metrics.handler },
    check: () => ({
      ...readiness(),
      service: "indexer",
      sealerIndex: config.SEALER_INDEX,
      sealedBlocks: indexer.sealedBlocks,
      consumerRestarts: indexer.consumerRestarts,
    }),
  });
}
