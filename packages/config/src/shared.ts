import { z } from "zod";
import { groupsVar, hostPortListVar, intVar, parseEnv, urlVar } from "./env.ts";
import { kafkaSecurityEnv } from "./kafka-security-env.ts";
import { storageTlsEnv } from "./storage-tls-env.ts";

/**
 * Variables every service reads. Kept in one place so the gateway, indexer and notifier agree
 * on where the log topics, tables and Redis keys are.
 */
export const sharedEnv = {
  DATABASE_URL: urlVar(["postgres:", "postgresql:"], "postgres://postgres@127.0.0.1:5432/test", "a postgres://user@host:port/db URL"),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .default("public")
    .describe("a lower-case Postgres schema name (letters, digits, _)"),
  DATABASE_POOL_SIZE: intVar(10, 1, 200, "connections per process, 1–200"),
  DATABASE_QUERY_TIMEOUT_MS: intVar(
    10_000,
    100,
    600_000,
    "ms a Postgres query may wait for its answer before it fails and its connection is dropped, 100–600000",
  ),
  KAFKA_BROKERS: hostPortListVar("127.0.0.1:9092", "comma-separated Kafka bootstrap servers, e.g. 127.0.0.1:9092"),
  KAFKA_TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/)
    .default("evb.")
    .describe("a prefix of letters, digits, '.', '_' or '-' for the Kafka log topics"),
  KAFKA_PARTITIONS: intVar(3, 1, 1024, "partitions per group log topic when it is created, 1–1024"),
  KAFKA_REPLICATION_FACTOR: intVar(1, 1, 7, "replicas per log topic when it is created, 1–7 (3 on a 3-broker cluster)"),
  KAFKA_REQUEST_TIMEOUT_MS: intVar(
    5_000,
    1_000,
    120_000,
    "ms a Kafka client waits for a broker's answer to one request before it drops the connection and tries again, 1000–120000",
  ),
  KAFKA_CONNECT_TIMEOUT_MS: intVar(1_000, 100, 60_000, "ms a Kafka client waits for a TCP connection to a broker, 100–60000"),
  ...kafkaSecurityEnv,
  REDIS_URL: urlVar(["redis:", "rediss:"], "redis://127.0.0.1:6379", "a redis://host:port URL (rediss:// for TLS)"),
  ...storageTlsEnv,
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:._-]*$/)
    .default("evb")
    .describe("a key prefix of letters, digits, ':', '.', '_' or '-'"),
  GROUP_IDS: groupsVar("1"),
  SECRETS_KEY: z
    .string()
    .trim()
    .regex(/^(|[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=?)$/)
    .default("")
    .describe(
      "32 bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`): encrypts the subscriptions' signing secrets at rest; every service must share it; empty = stored readable",
    ),
  LOG_LEVEL: z
    .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
    .default("info")
    .describe("one of trace, debug, info, warn, error, fatal, silent"),
};

export type SharedConfig = z.infer<z.ZodObject<typeof sharedEnv>>;

/**
 * The group ids as the services will read them (GROUP_IDS, or the deprecated GROUPS), for
 * tools that start services, such as `npm start`. Throws a ConfigError naming the fix.
 */
export function groupIdsFromEnv(who: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return parseEnv(who, z.object({ GROUP_IDS: sharedEnv.GROUP_IDS }), env).GROUP_IDS;
}
