import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type Child, consoleProgress, freePort, type ServiceName, startServiceProcess, startStack } from "@evb/devstack";

export interface BenchSystem {
  /** L-mount base URLs of the gateways, e.g. http://127.0.0.1:1234/event-broker */
  gateways: string[];
  /** The gateways' origins, e.g. http://127.0.0.1:1234 */
  origins: string[];
  /** Every service's Prometheus endpoint, named as the process (gateway-1, indexer-1, …). */
  metrics: { name: string; url: string }[];
  stop(): Promise<void>;
}

/**
 * An isolated broker for a benchmark: its own schema, topic prefix and Redis prefix on the
 * configured (or test) stack, services as child processes. Removes nothing that is not its own.
 */
export async function startBenchSystem(opts: {
  gateways: number;
  indexers: number;
  notifiers?: number;
  env?: Record<string, string>;
}): Promise<BenchSystem> {
  const root = join(import.meta.dirname, "..");
  const stack = await startStack({
    dir: process.env.STACK_DIR ?? join(root, ".cache"),
    kafkaBrokers: process.env.KAFKA_BROKERS,
    databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    kafka: { brokers: 1, basePort: 19092, fresh: true, folder: "kafka-bench" },
    progress: consoleProgress,
  });
  const id = randomBytes(4).toString("hex");
  const env: Record<string, string> = {
    KAFKA_BROKERS: stack.kafkaBrokers,
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.redisUrl,
    DATABASE_SCHEMA: `bench_${id}`,
    KAFKA_TOPIC_PREFIX: `bench${id}.`,
    KAFKA_CONSUMER_GROUP: `bench${id}`,
    REDIS_PREFIX: `bench${id}`,
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    ...opts.env,
  };
  const children: Child[] = [];
  const origins: string[] = [];
  const metrics: { name: string; url: string }[] = [];
  const spawn = async (name: string, service: ServiceName, extra: Record<string, string>) => {
    const port = await freePort();
    const portVar: Record<string, string> = service === "gateway" ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
    children.push(
      await startServiceProcess({
        name,
        service,
        env: { ...env, ...extra, ...portVar },
        healthUrl: `http://127.0.0.1:${port}/health`,
        output: "prefixed",
      }),
    );
    if (service === "gateway") origins.push(`http://127.0.0.1:${port}`);
    metrics.push({ name, url: `http://127.0.0.1:${port}/metrics` });
  };
  const stop = async () => {
    for (const c of children.reverse()) await c.stop();
    await stack.stop();
  };
  try {
    for (let i = 0; i < opts.indexers; i++) await spawn(`indexer-${i + 1}`, "indexer", { SEALER_INDEX: String(i) });
    for (let i = 0; i < (opts.notifiers ?? 0); i++) await spawn(`notifier-${i + 1}`, "notifier", {});
    for (let i = 0; i < opts.gateways; i++) await spawn(`gateway-${i + 1}`, "gateway", {});
  } catch (err) {
    await stop();
    throw err;
  }
  return { gateways: origins.map((o) => `${o}/event-broker`), origins, metrics, stop };
}

/** The p-th percentile (0–100) of sorted numbers, formatted with one decimal. */
export function percentile(sorted: readonly number[], p: number): string {
  return (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0).toFixed(1);
}
