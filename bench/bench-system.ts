import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import pg from "pg";
import { join } from "node:path";
import { cpuProfileArgs } from "./cpu-profile.ts";
import { type Child, consoleProgress, freePort, type ServiceName, type Stack, startServiceProcess, startStack } from "@evb/devstack";

export interface BenchSystem {
  /** L-mount base URLs of the gateways, e.g. http://127.0.0.1:1234/event-broker */
  gateways: string[];
  /** The gateways' origins, e.g. http://127.0.0.1:1234 */
  origins: string[];
  /** The gateways' MQTT TCP ports (MQTT_PORT), in the order of `origins`. */
  mqttPorts: number[];
  /** Every service's Prometheus endpoint, named as the process (gateway-1, indexer-1, …). */
  metrics: { name: string; url: string }[];
  /** The Postgres schema of this system's ledger. */
  schema: string;
  /** Peak resident memory (VmHWM) of each service so far, in MiB, by service name. */
  peakRssMiB(): Record<string, number>;
  /** CPU time (user + system) of each service so far, in seconds, by service name. */
  cpuSeconds(): Record<string, number>;
  stop(): Promise<void>;
  /** Removes this system's Postgres schema and Redis keys (after `stop`); says what it could not remove. */
  dropData(say: (m: string) => void): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * Kafka, Postgres and Redis for a benchmark: KAFKA_BROKERS / DATABASE_URL / REDIS_URL when set,
 * otherwise a fresh Kafka broker of its own on a free port (its controller on that port + 100,
 * as KafkaCluster lays them out) and the local Postgres and Redis.
 */
export async function startBenchStack(): Promise<Stack> {
  let basePort = 0;
  if (!process.env.KAFKA_BROKERS) {
    for (let tries = 0; tries < 20 && !basePort; tries++) {
      const p = await freePort();
      if (p + 100 < 65536 && (await portFree(p + 100))) basePort = p;
    }
  }
  return startStack({
    dir: process.env.STACK_DIR ?? join(import.meta.dirname, "..", ".cache"),
    kafkaBrokers: process.env.KAFKA_BROKERS,
    databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    kafka: { brokers: 1, basePort, fresh: true, folder: "kafka-bench", heap: "1g" },
    progress: consoleProgress,
  });
}

/** VmHWM of a process in MiB, or 0 when it cannot be read (not Linux, or gone). */
export function peakRssOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const kb = /VmHWM:\s*(\d+)\s*kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system) a process has used, in seconds, from `/proc/<pid>/stat`; 0 when it
 * cannot be read. Fields 14 and 15 after the parenthesised command name, in clock ticks (100/s on Linux).
 */
export function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return cpuSecondsFromStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return 0;
  }
}

/** utime + stime of a `/proc/<pid>/stat` line, in seconds (USER_HZ 100). */
export function cpuSecondsFromStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100 || 0;
}

/**
 * An isolated broker on a bench stack, started the way `npm start` starts it (services as
 * child processes): its own schema, Kafka topic prefix and Redis prefix. `stop()` stops the
 * services only; the stack belongs to the caller.
 */
export async function startBenchSystem(
  stack: Stack,
  opts: { gateways: number; indexers: number; notifiers?: number; env?: Record<string, string> },
): Promise<BenchSystem> {
  const id = randomBytes(4).toString("hex");
  const schema = `bench_${id}`;
  const redisPrefix = `bench${id}`;
  const env: Record<string, string> = {
    KAFKA_BROKERS: stack.kafkaBrokers,
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.redisUrl,
    DATABASE_SCHEMA: schema,
    KAFKA_TOPIC_PREFIX: `bench${id}.`,
    KAFKA_CONSUMER_GROUP: `bench${id}`,
    REDIS_PREFIX: redisPrefix,
    CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    ...opts.env,
  };
  const children: Child[] = [];
  const origins: string[] = [];
  const mqttPorts: number[] = [];
  const metrics: { name: string; url: string }[] = [];
  const spawn = async (name: string, service: ServiceName, extra: Record<string, string>) => {
    const port = await freePort();
    const mqttPort = service === "gateway" ? await freePort() : 0;
    const portVar: Record<string, string> =
      service === "gateway" ? { PORT: String(port), MQTT_PORT: String(mqttPort) } : { HEALTH_PORT: String(port) };
    children.push(
      await startServiceProcess({
        name,
        service,
        env: { ...env, ...extra, ...portVar },
        nodeArgs: cpuProfileArgs(`${id}-${name}`),
        healthUrl: `http://127.0.0.1:${port}/health`,
        output: "prefixed",
      }),
    );
    if (service === "gateway") {
      origins.push(`http://127.0.0.1:${port}`);
      mqttPorts.push(mqttPort);
    }
    metrics.push({ name, url: `http://127.0.0.1:${port}/metrics` });
  };
  const stop = async () => {
    for (const c of [...children].reverse()) await c.stop();
  };
  try {
    for (let i = 0; i < opts.indexers; i++) await spawn(`indexer-${i + 1}`, "indexer", { SEALER_INDEX: String(i) });
    for (let i = 0; i < (opts.notifiers ?? 0); i++) await spawn(`notifier-${i + 1}`, "notifier", {});
    for (let i = 0; i < opts.gateways; i++) await spawn(`gateway-${i + 1}`, "gateway", {});
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    gateways: origins.map((o) => `${o}/event-broker`),
    origins,
    mqttPorts,
    metrics,
    schema,
    peakRssMiB: () => Object.fromEntries(children.map((c) => [c.name, peakRssOf(c.pid)])),
    cpuSeconds: () => Object.fromEntries(children.map((c) => [c.name, cpuSecondsOf(c.pid)])),
    stop,
    dropData: (say) => dropData(stack, schema, redisPrefix, say),
  };
}

async function dropData(stack: Stack, schema: string, redisPrefix: string, say: (m: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } catch (err) {
    say(`could not drop schema ${schema}: ${String(err)}`);
  } finally {
    await client.end().catch(() => {});
  }
  const redis = new Redis(stack.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== "0");
  } catch (err) {
    say(`could not remove Redis keys ${redisPrefix}:*: ${String(err)}`);
  } finally {
    redis.disconnect();
  }
}

/** The p-th percentile (0–100) of sorted numbers, formatted with one decimal. */
export function percentile(sorted: readonly number[], p: number): string {
  return (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0).toFixed(1);
}
