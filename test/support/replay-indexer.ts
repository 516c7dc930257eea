import { join } from "node:path";
import { freePort, startServiceProcess } from "@evb/devstack";
import { logTopicName, silentLogger } from "@evb/domain";
import { createKafka, LogInspector } from "@evb/eventlog";
import { waitUntil } from "./publish-stream.ts";
import type { TestSystem } from "./system.ts";

const LOG_DIR = join(import.meta.dirname, "..", "..", ".cache", "test-logs");

/**
 * Runs one more indexer on a system's ledger under a NEW Kafka consumer group, so that it
 * receives the group's whole log again from offset 0: every record a second time, as after a
 * lost offset commit. Resolves once that consumer group has committed up to the end of every
 * partition, and answers how many blocks it sealed (0 when redelivery is harmless) and how many
 * records it went through.
 */
export async function replayWholeLog(sys: TestSystem, groupId = "1"): Promise<{ sealedBlocks: number; records: number }> {
  const port = await freePort();
  const consumerGroup = `${sys.env.KAFKA_CONSUMER_GROUP}-replay`;
  const healthUrl = `http://127.0.0.1:${port}/health`;
  const child = await startServiceProcess({
    name: "indexer-replay",
    service: "indexer",
    env: { ...sys.env, KAFKA_CONSUMER_GROUP: consumerGroup, SEALER_INDEX: "99", HOST: "127.0.0.1", HEALTH_PORT: String(port) },
    healthUrl,
    output: { file: join(LOG_DIR, `${sys.env.REDIS_PREFIX}-indexer-replay.log`) },
  });
  const kafka = createKafka({ brokers: (sys.env.KAFKA_BROKERS as string).split(","), clientId: "test-replay", logger: silentLogger });
  const inspector = new LogInspector({ kafka });
  try {
    const topic = logTopicName(sys.env.KAFKA_TOPIC_PREFIX as string, groupId);
    const ends = await inspector.offsets(topic);
    await waitUntil("the replaying indexer has consumed the whole log", async () => {
      const committed = await inspector.committed(topic, consumerGroup);
      return ends.every((end) => end.high === 0 || (committed.get(end.partition) ?? -1) >= end.high);
    });
    const health = (await (await fetch(healthUrl)).json()) as { sealedBlocks: number };
    return { sealedBlocks: health.sealedBlocks, records: ends.reduce((n, e) => n + e.high - e.low, 0) };
  } finally {
    await inspector.close();
    await child.stop(5000);
  }
}
