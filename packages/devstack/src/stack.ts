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
  /** Ports for a private PostgreSQL / Redis, when one is started; default 54329 / 63799. */
  privatePorts?: { postgres?: number; redis?: number };
  /**
   * Restart what this stack started (each Kafka broker, a private Postgres or Redis) when it
   * dies, with the services' backoff (`npm start`). Default false: tests kill brokers on purpose.
   */
  supervise?: boolean;
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
 * Kafka, PostgreSQL and Redis for one machine: reuses what answers at the configured addresses
 * and starts the rest locally. `stop()` ends everything `start()` started, at any moment: also
 * while it is still starting (Ctrl-C during a slow Kafka start), after which `start()` rejects.
 */
export class LocalStack {
  private readonly opts: StackOptions;
  /** How to stop each thing started, registered before it starts so that a stop mid-start reaches it. */
  private readonly stops: Array<() => Promise<void>> = [];
  private stopping: Promise<void> | undefined;

  constructor(opts: StackOptions) {
    this.opts = opts;
  }

  /** Stops what was started, in reverse order, and any start still under way; idempotent (every call waits for the one stop). */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const s of this.stops.reverse()) await s().catch((e) => this.opts.progress(`stop failed: ${String(e)}`));
    })();
    return this.stopping;
  }

  /** Each `await` of a start may return after a stop(); nothing new may start then. */
  private notStopped(): void {
    if (this.stopping) throw new Error("the stack was stopped while it started");
  }

  async start(): Promise<Stack> {
    const { opts } = this;
    const supervise = opts.supervise ?? false;
    try {
      let databaseUrl = opts.databaseUrl;
      const pgAnswers = await postgresAnswers(databaseUrl);
      this.notStopped();
      if (pgAnswers) {
        opts.progress(`postgres: using ${redactUrl(databaseUrl)}`);
      } else {
        opts.progress(`postgres: nothing answers at ${redactUrl(databaseUrl)}`);
        const pg = new PostgresServer(join(opts.dir, "postgres"), opts.privatePorts?.postgres ?? 54329, opts.progress, supervise);
        this.stops.push(() => pg.stop());
        databaseUrl = await pg.start();
        this.notStopped();
      }
      let redisUrl = opts.redisUrl;
      const redisUp = await redisAnswers(redisUrl);
      this.notStopped();
      if (redisUp) {
        opts.progress(`redis: using ${redactUrl(redisUrl)}`);
      } else {
        opts.progress(`redis: nothing answers at ${redactUrl(redisUrl)}`);
        const redis = new RedisServer(join(opts.dir, "redis"), opts.privatePorts?.redis ?? 63799, opts.progress, supervise);
        this.stops.push(() => redis.stop());
        redisUrl = await redis.start();
        this.notStopped();
      }
      let kafkaBrokers = opts.kafkaBrokers;
      let kafka: KafkaCluster | undefined;
      if (kafkaBrokers) {
        opts.progress(`kafka: using ${kafkaBrokers}`);
      } else {
        const k = new KafkaCluster({
          dir: join(opts.dir, opts.kafka?.folder ?? "kafka"),
          ...opts.kafka,
          supervise,
          progress: opts.progress,
        });
        kafka = k;
        this.stops.push(() => k.stop());
        kafkaBrokers = (await k.start()).join(",");
        this.notStopped();
      }
      return { kafkaBrokers, databaseUrl, redisUrl, ...(kafka ? { kafka } : {}), stop: () => this.stop() };
    } catch (err) {
      await this.stop();
      throw err;
    }
  }
}

/** Starts a `LocalStack` (see there); on failure, what it started is stopped before this rejects. */
export function startStack(opts: StackOptions): Promise<Stack> {
  return new LocalStack(opts).start();
}
