import { Redis } from "ioredis";
import pg from "pg";
import { redactUrl, type SharedConfig } from "@evb/config";
import { errorMessage, type Logger, logTopicName } from "@evb/domain";
import { createKafka, ensureTopics, type KafkaClient } from "@evb/eventlog";
import { migrate, poolOptions } from "@evb/storage";
import type { MetadataAdmin, TopicMetadata } from "./kafka-probe.ts";
import { checkKafkaLink } from "./kafka-link.ts";
import { checkRedisLink } from "./redis-link.ts";
import { kafkaSecurity } from "./kafka-security.ts";
import { postgresSsl, redisTls } from "./storage-tls.ts";
import { replaceWhenSilent, SILENCE_LIMIT_MS } from "./redis-silence.ts";

/** TLS towards Postgres when the settings ask for it (storage-tls.ts). */
function withSsl(config: SharedConfig): { ssl?: pg.PoolConfig["ssl"] } {
  const ssl = postgresSsl(config);
  return ssl === undefined ? {} : { ssl };
}

/** TLS towards Redis for a rediss:// URL (storage-tls.ts). */
function withTls(config: SharedConfig): { tls?: ReturnType<typeof redisTls> } {
  const tls = redisTls(config);
  return tls === undefined ? {} : { tls };
}

/** The Postgres pool of a service, in its schema; idle-client failures are logged, not thrown. */
export function openPostgres(config: SharedConfig, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    ...poolOptions(config.DATABASE_URL, config.DATABASE_SCHEMA, config.DATABASE_POOL_SIZE, config.DATABASE_QUERY_TIMEOUT_MS),
    ...withSsl(config),
  });
  pool.on("error", (err) => logger.warn({ err: errorMessage(err) }, "idle Postgres client failed"));
  return pool;
}

/**
 * A pool of its own for readiness checks: two connections, and every wait (for a connection, a
 * connect, an answer) bounded by `timeoutMs`, so that a silent Postgres fails a look within it and
 * the next look gets a fresh connection. Sharing the service's pool would make a check wait behind
 * its work (or its stalled queries) and report a busy pool as a lost database.
 */
export function openReadinessPostgres(config: SharedConfig, logger: Logger, timeoutMs: number): pg.Pool {
  const pool = new pg.Pool({ ...poolOptions(config.DATABASE_URL, config.DATABASE_SCHEMA, 2, timeoutMs), ...withSsl(config) });
  pool.on("error", (err) => logger.debug({ err: errorMessage(err) }, "idle readiness Postgres client failed"));
  return pool;
}

/**
 * How a Redis connection is used:
 * - `commands`: request/response work on an HTTP or indexing path (registry, counters,
 *   receipts). A command fails after one reconnect attempt or 2 s, so a Redis outage gives a
 *   prompt error or a skipped hint, never a hung request.
 * - `subscriber` and `bullmq`: long-lived subscriptions and BullMQ's blocking connections,
 *   which must wait out a Redis restart (BullMQ requires `maxRetriesPerRequest: null`).
 */
export type RedisUse = "commands" | "subscriber" | "bullmq";

/**
 * The wait before the next attempt to reconnect to Redis: at most 250 ms (ioredis's default grows
 * to 2 s). After a Redis outage, the gateways' readiness waits for the indexers' next heartbeat,
 * which waits for their reconnect, and its own look's reconnect too: with 2 s, then 500 ms, the
 * gateways were ready 2-2.5 s after Redis on the multi-host bed.
 */
const reconnectDelay = (times: number): number => Math.min(times * 50, 250);

/**
 * A Redis connection in RESP2 (what BullMQ and our pub/sub expect from ioredis 6). Command and
 * subscriber connections replace a socket whose Redis went silent (`replaceWhenSilent`; BullMQ's
 * blocking commands would hold a PING back). A command in flight then is not sent again (it
 * fails at its timeout, as its caller is told, and Redis may have done it once: a counter must
 * not count it twice); a subscriber's SUBSCRIBE is (harmless twice, and awaited).
 */
export function openRedis(config: SharedConfig, logger: Logger, use: RedisUse): Redis {
  const bounded = use === "commands" ? { maxRetriesPerRequest: 1, commandTimeout: 2000 } : { maxRetriesPerRequest: null };
  const watched = use !== "bullmq";
  const redis = new Redis(config.REDIS_URL, {
    ...withTls(config),
    protocol: 2,
    retryStrategy: reconnectDelay,
    ...bounded,
    ...(use === "commands" ? { autoResendUnfulfilledCommands: false } : {}),
    // A connect whose SYN went into a lost link is retransmitted 1, 3, 7 s later: with ioredis's
    // 10 s limit one attempt spanned the heal and failed 1.7 s after it; a fresh attempt every
    // ~1.25 s gets through within about that of the network's return.
    ...(watched ? { connectTimeout: SILENCE_LIMIT_MS } : {}),
  });
  redis.on("error", (err) => logger.warn({ err: errorMessage(err) }, "Redis connection error"));
  if (watched) replaceWhenSilent(redis, logger);
  return redis;
}

/**
 * The readiness checks' own Redis connection: a command (connect included) fails after
 * `timeoutMs` and is never retried, and a lost connection is tried again every 0.25 s at most, so
 * that Redis coming back shows within half a second. Its errors are the check's to report, once.
 */
export function openReadinessRedis(config: SharedConfig, logger: Logger, timeoutMs: number): Redis {
  const redis = new Redis(config.REDIS_URL, {
    ...withTls(config),
    protocol: 2,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    retryStrategy: reconnectDelay,
  });
  redis.on("error", (err) => logger.debug({ err: errorMessage(err) }, "readiness Redis connection error"));
  return redis;
}

/**
 * What must exist before a service serves: a Redis that can be spoken to (checkRedisLink: a
 * wrong CA or TLS on one side stops the start), the ledger schema (migrations, idempotent and
 * serialised by an advisory lock) and, when a Kafka client is given, a link the client can use
 * (checkKafkaLink) and the group log topics.
 */
export async function prepareStorage(config: SharedConfig, pool: pg.Pool, kafka: KafkaClient | null, logger: Logger): Promise<void> {
  await checkRedisLink(config);
  try {
    await migrate(pool, config.DATABASE_SCHEMA, logger);
  } catch (err) {
    throw new Error(
      `Postgres at ${redactUrl(config.DATABASE_URL)} (schema ${config.DATABASE_SCHEMA}) could not be prepared: ${(err as Error).message}. ` +
        "Check DATABASE_URL, that the server runs and that the user may create tables in that schema.",
      { cause: err },
    );
  }
  if (kafka) {
    await checkKafkaLink(kafka, config);
    try {
      await ensureTopics(
        kafka,
        config.GROUP_IDS.map((g) => logTopicName(config.KAFKA_TOPIC_PREFIX, g)),
        config.KAFKA_PARTITIONS,
        config.KAFKA_REPLICATION_FACTOR,
      );
    } catch (err) {
      throw new Error(
        `Kafka at ${config.KAFKA_BROKERS.join(",")} could not be prepared: ${(err as Error).message}. ` +
          "Check KAFKA_BROKERS, that the brokers run, and that KAFKA_REPLICATION_FACTOR is not above the number of brokers.",
        { cause: err },
      );
    }
  }
}

/**
 * A service's Kafka access, with the timeouts and the TLS and SASL its configuration chose
 * (docs/configuration.md); throws a ConfigError when the security settings cannot work.
 */
export function openKafka(config: SharedConfig, clientId: string, logger: Logger): KafkaClient {
  return createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId,
    logger,
    timeouts: { requestMs: config.KAFKA_REQUEST_TIMEOUT_MS, connectMs: config.KAFKA_CONNECT_TIMEOUT_MS },
    security: kafkaSecurity(config),
  });
}

/**
 * The probe's admin client on @platformatic/kafka: one metadata request, not retried (the probe
 * asks again every interval, and a request retried for seconds would look hung). A topic Kafka
 * does not know is left out, so that the probe names it.
 */
export function metadataAdmin(kafka: KafkaClient): MetadataAdmin {
  const admin = kafka.admin("probe");
  return {
    topicMetadata: async (topics) => {
      try {
        const md = await admin.metadata({ topics, forceUpdate: true, retries: 0 });
        return topics.flatMap((name): TopicMetadata[] => {
          const t = md.topics.get(name);
          return t ? [{ name, partitions: t.partitions.map((p, partitionId) => ({ partitionId, leader: p.leader })) }] : [];
        });
      } catch (err) {
        const known = answeredTopics(err);
        if (known === undefined) throw err;
        return known;
      }
    },
    close: () => admin.close(),
  };
}

/** The topics a metadata answer with errors still describes (Kafka answers UNKNOWN_TOPIC_OR_PARTITION for a missing one). */
function answeredTopics(err: unknown): TopicMetadata[] | undefined {
  type Answer = { topics?: { errorCode: number; name: string | null; partitions: { partitionIndex: number; leaderId: number }[] }[] };
  const e = err as { response?: Answer; errors?: { response?: Answer }[] } | undefined;
  const topics = (e?.response ?? e?.errors?.at(-1)?.response)?.topics;
  if (!topics || topics.some((t) => t.errorCode !== 0 && t.errorCode !== UNKNOWN_TOPIC_OR_PARTITION)) return undefined;
  return topics
    .filter((t) => t.errorCode === 0 && t.name !== null)
    .map((t) => ({ name: t.name as string, partitions: t.partitions.map((p) => ({ partitionId: p.partitionIndex, leader: p.leaderId })) }));
}

const UNKNOWN_TOPIC_OR_PARTITION = 3;
