/**
 * `npm start`: the whole broker on one machine with nothing configured.
 *
 * Reuses Kafka/Postgres/Redis where KAFKA_BROKERS / DATABASE_URL / REDIS_URL answer, starts the
 * rest locally (Kafka from its Maven Central jars), applies migrations, creates the log topics,
 * then runs gateway(s), indexer(s) and notifier(s) as child processes with prefixed logs.
 * Every process it started, the Kafka brokers and a private Postgres/Redis included, is
 * restarted when it dies (with backoff). Ports another stack holds stop it at once, naming the
 * port and the process. Ctrl-C stops everything it started, in reverse order, and nothing else,
 * at any moment (also in the middle of the start); a second Ctrl-C kills it all at once.
 *
 * This file reads the arguments and the environment and prints; the stack itself is
 * `BrokerStack` in packages/devstack.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { groupIdsFromEnv, parseEnv, sharedEnv } from "@evb/config";
import { BrokerStack, consoleProgress, describeTakenPorts, killEveryChild, readyMessage, StartInterrupted, StartLock } from "@evb/devstack";
import { kafkaSecurity } from "@evb/runtime";
import { z } from "zod";

const ROOT = join(import.meta.dirname, "..");
const CACHE = process.env.STACK_DIR ?? join(ROOT, ".cache");

const { values: args } = parseArgs({
  options: {
    gateways: { type: "string", default: process.env.START_GATEWAYS ?? "1" },
    indexers: { type: "string", default: process.env.START_INDEXERS ?? "1" },
    notifiers: { type: "string", default: process.env.START_NOTIFIERS ?? "1" },
    "kafka-brokers": { type: "string", default: process.env.START_KAFKA_BROKERS ?? "1" },
    help: { type: "boolean", default: false },
  },
});

if (args.help) {
  process.stdout.write(`npm start [-- --gateways N] [--indexers N] [--notifiers N] [--kafka-brokers 1|3]
Starts the broker with its own Kafka (and Postgres/Redis when none answers). Gateway i listens on PORT+i-1 (default 8080),
and speaks MQTT over TCP on MQTT_PORT+i-1 (default 1884, beside a local mosquitto's 1883).
`);
  process.exit(0);
}

function count(name: string, v: string, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    process.stderr.write(`--${name} must be a whole number from 1 to ${max} (got "${v}")\n`);
    process.exit(2);
  }
  return n;
}
const counts = {
  gateways: count("gateways", args.gateways, 8),
  indexers: count("indexers", args.indexers, 8),
  notifiers: count("notifiers", args.notifiers, 8),
  kafkaBrokers: count("kafka-brokers", args["kafka-brokers"], 3),
};
const groups = (() => {
  try {
    return groupIdsFromEnv("npm start");
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
})();

// An external Kafka (KAFKA_BROKERS) may need TLS and SASL (KAFKA_SSL_*, KAFKA_SASL_*): the topics are created with them too.
const kafkaSecurityOptions = (() => {
  if (!process.env.KAFKA_BROKERS) return undefined;
  try {
    return kafkaSecurity(parseEnv("npm start", z.object(sharedEnv)));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
})();

// One `npm start` at a time: a second one says so instead of fighting over ports.
const lock = new StartLock(join(CACHE, "start.lock"));
const holder = lock.take();
if (holder !== undefined) {
  process.stderr.write(
    `The broker is already running (npm start, pid ${holder}). Stop it with Ctrl-C in its terminal or \`kill ${holder}\`.\n`,
  );
  process.exit(1);
}

const broker = new BrokerStack({
  dir: CACHE,
  counts,
  ports: {
    host: process.env.HOST ?? "127.0.0.1",
    base: Number(process.env.PORT ?? 8080),
    // 1884 by default, not 1883, where a mosquitto often listens.
    mqtt: Number(process.env.MQTT_PORT ?? 1884),
    kafka: Number(process.env.KAFKA_PORT ?? 9092),
  },
  kafkaBrokers: process.env.KAFKA_BROKERS,
  kafkaSecurity: kafkaSecurityOptions,
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  databaseSchema: process.env.DATABASE_SCHEMA ?? "public",
  topicPrefix: process.env.KAFKA_TOPIC_PREFIX ?? "evb.",
  groups,
  partitions: Number(process.env.KAFKA_PARTITIONS ?? 3),
  replicationFactor: process.env.KAFKA_REPLICATION_FACTOR === undefined ? undefined : Number(process.env.KAFKA_REPLICATION_FACTOR),
  callbackAllowedCidrs: process.env.CALLBACK_ALLOWED_CIDRS ?? "127.0.0.0/8,::1/128",
  secrets: { WEBHOOK_SECRETS: process.env.WEBHOOK_SECRETS, SECRETS_KEY: process.env.SECRETS_KEY },
  progress: consoleProgress,
});
let stopping: Promise<never> | undefined;

/** The one shutdown: later calls (a start step failing because of it) wait for it rather than exit early. */
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    consoleProgress("stopping…");
    await broker.stop();
    lock.release();
    consoleProgress("stopped");
    process.exit(code);
  })();
  return stopping;
}

let signals = 0;
function onSignal(): void {
  if (++signals === 1) {
    void shutdown(0);
    return;
  }
  // Whoever presses Ctrl-C twice will not wait for a clean stop; still, nothing may outlive us.
  killEveryChild();
  lock.release();
  consoleProgress("stopped at once: killed every process it started");
  process.exit(130);
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

const taken = await broker.takenPorts().catch((err: unknown) => {
  lock.release();
  throw err;
});
if (taken.length > 0) {
  process.stderr.write(
    `npm start: ${describeTakenPorts(taken)}\n` +
      "Another broker stack is probably running. Stop it, or give this one other ports, e.g. PORT=18080 KAFKA_PORT=19192 npm start.\n",
  );
  lock.release();
  process.exit(1);
}

try {
  const ready = await broker.start();
  consoleProgress(readyMessage(ready, process.env.VARIANTS ?? "L:/event-broker,M:/event-m,E:/event-e"));
} catch (err) {
  // A start step cut short by Ctrl-C is no failure: the shutdown it belongs to finishes and
  // exits. A terminal's Ctrl-C also ends a synchronous step (initdb, the Kafka storage format)
  // before our handler runs; one turn of the event loop usually lets the handler see the signal
  // first, and a step known to be ended by a signal waits for it up to 2 s.
  await new Promise((r) => setImmediate(r));
  for (let waited = 0; err instanceof StartInterrupted && !stopping && waited < 2_000; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
  if (stopping) await stopping;
  process.stderr.write(`npm start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  await shutdown(1);
}
