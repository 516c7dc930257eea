import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { inject } from "vitest";

/** Environment for one isolated broker: its own schema, Kafka topics, consumer group and Redis keys. */
export function isolatedEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const id = randomBytes(4).toString("hex");
  return {
    KAFKA_BROKERS: inject("kafkaBrokers"),
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    DATABASE_SCHEMA: `t_${id}`,
    KAFKA_TOPIC_PREFIX: `t${id}.`,
    KAFKA_CONSUMER_GROUP: `t${id}-indexer`,
    REDIS_PREFIX: `t${id}`,
    KAFKA_PARTITIONS: "3",
    LOG_LEVEL: "info",
    ...overrides,
  };
}

/** Removes an isolated broker's Postgres schema and Redis keys (best effort: cleanup never fails a test). */
export async function dropTestData(env: Record<string, string>): Promise<void> {
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${env.DATABASE_SCHEMA}" CASCADE`);
  } catch {
    // left behind; harmless
  } finally {
    await client.end().catch(() => {});
  }
  // A rediss:// test server (test/storage-tls) is cleaned over TLS; what it serves is not trusted here, only deleted.
  const tls = env.REDIS_URL?.startsWith("rediss:") ? { tls: { rejectUnauthorized: false } } : {};
  const redis = new Redis(env.REDIS_URL as string, { maxRetriesPerRequest: 1, lazyConnect: true, ...tls });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${env.REDIS_PREFIX}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
  } catch {
    // left behind; harmless
  } finally {
    redis.disconnect();
  }
}
