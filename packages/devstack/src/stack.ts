import { join } from "node:path";
import { redactUrl } from "@evb/config";
import { KafkaCluster } from "./kafka-cluster.ts";
import { PostgresServer, postgresAnswers } from "./postgres-server.ts";
import type { Progress } from "./progress.ts";
import { RedisServer, redisAnswers } from "./redis-server.ts";

export interface StackOptions {
  /** Cache folder for jars, data and logs (ignored by git). */
  dir: string;
  /** Use this Kafka when set (comma-separated host:port list); otherwise start one. */
  kafkaBrokers?: string | undefined;
  /** Use this PostgreSQL when it answers; otherwise start a private one. */
  databaseUrl: string;
  /** Use this Redis when it answers; otherwise start a private one. */
  redisUrl: string;
  kafka?: { brokers?: number; basePort?: number; fresh?: boolean; heap?: string; folder?: string };
  progress: Progress;
}

export interface Stack {
  kafkaBrokers: string;
  databaseUrl: string;
  redisUrl: string;
  /** The Kafka cluster we started, if we started one (failure tests stop and restart its brokers). */
  kafka?: KafkaCluster;
  /** Stops what this stack started, in reverse order, and nothing else. */
  stop(): Promise<void>;
}

/**
 * Brings up Kafka, PostgreSQL and Redis: reuses what answers at the configured addresses and
 * starts the rest locally. Anything started here is stopped by `stop()`.
 */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((e) => opts.progress(`stop failed: ${String(e)}`));
    stops.length = 0;
  };
  try {
    let databaseUrl = opts.databaseUrl;
    if (await postgresAnswers(databaseUrl)) {
      opts.progress(`postgres: using ${redactUrl(databaseUrl)}`);
    } else {
      opts.progress(`postgres: nothing answers at ${redactUrl(databaseUrl)}`);
      const pg = new PostgresServer(join(opts.dir, "postgres"), 54329, opts.progress);
      databaseUrl = await pg.start();
      stops.push(() => pg.stop());
    }
    let redisUrl = opts.redisUrl;
    if (await redisAnswers(redisUrl)) {
      opts.progress(`redis: using ${redactUrl(redisUrl)}`);
    } else {
      opts.progress(`redis: nothing answers at ${redactUrl(redisUrl)}`);
      const redis = new RedisServer(join(opts.dir, "redis"), 63799, opts.progress);
      redisUrl = await redis.start();
      stops.push(() => redis.stop());
    }
    let kafkaBrokers = opts.kafkaBrokers;
    let kafka: KafkaCluster | undefined;
    if (kafkaBrokers) {
      opts.progress(`kafka: using ${kafkaBrokers}`);
    } else {
      kafka = new KafkaCluster({ dir: join(opts.dir, opts.kafka?.folder ?? "kafka"), ...opts.kafka, progress: opts.progress });
      const k = kafka;
      stops.push(() => k.stop());
      kafkaBrokers = (await kafka.start()).join(",");
    }
    return { kafkaBrokers, databaseUrl, redisUrl, ...(kafka ? { kafka } : {}), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
