import { z } from "zod";
import { intVar, parseEnv, podIpVar, podNameVar, SEALER_INDEX_MAX, sharedEnv, withDerivedIdentity } from "@evb/config";
import { registryEnv } from "@evb/registry";

export const IndexerEnv = z.object({
  ...sharedEnv,
  ...registryEnv,
  SEALER_INDEX: intVar(
    0,
    0,
    SEALER_INDEX_MAX,
    "this indexer's sealer number, 0–1023, distinct per indexer instance; unset: POD_NAME's trailing -N, else 0",
  ),
  KAFKA_CONSUMER_GROUP: z.string().min(1).default("evb-indexer").describe("the Kafka consumer group all indexers share"),
  MAX_BATCH_BYTES: intVar(1_048_576, 16_384, 67_108_864, "most bytes fetched per partition per block, 16384–67108864"),
  READY_MAX_LAG_RECORDS: intVar(
    100_000,
    1,
    1_000_000_000,
    "most records a log partition may lag behind its end while the indexer still reports ready, 1–1000000000",
  ),
  HEALTH_PORT: intVar(0, 0, 65535, "port of the /health endpoint (0 = a free port, logged at start)"),
  METRICS_POLL_MS: intVar(
    5_000,
    100,
    600_000,
    "milliseconds between refreshes of the /metrics gauges read from Postgres and Kafka (chain heights, lag), 100–600000",
  ),
  HOST: z.string().min(1).default("127.0.0.1").describe("address the health endpoint listens on"),
  INSTANCE_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/)
    .optional()
    .describe("this indexer's ip:port as admin/blockchaininfo lists it; defaults to POD_IP:HEALTH_PORT, else HOST:HEALTH_PORT"),
  POD_NAME: podNameVar,
  POD_IP: podIpVar,
});
export type IndexerConfig = z.infer<typeof IndexerEnv>;

export function loadIndexerConfig(env: NodeJS.ProcessEnv = process.env): IndexerConfig {
  // Replicas of one StatefulSet get their own sealer number and address (docs/configuration.md).
  return parseEnv(
    "indexer",
    IndexerEnv,
    withDerivedIdentity("indexer", env, { sealerIndex: true, portVar: "HEALTH_PORT", portField: IndexerEnv.shape.HEALTH_PORT }),
  );
}
