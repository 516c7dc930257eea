/**
 * `npm start`: the whole broker on one machine with nothing configured.
 *
 * Reuses Kafka/Postgres/Redis where KAFKA_BROKERS / DATABASE_URL / REDIS_URL answer, starts the
 * rest locally (Kafka from its Maven Central jars), applies migrations, creates the log topics,
 * then runs gateway(s), indexer(s) and notifier(s) as child processes with prefixed logs.
 * Ctrl-C stops everything it started, in reverse order, and nothing else.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { groupIdsFromEnv } from "@evb/config";
import { type Child, consoleProgress, redact, startServiceProcess, startStack } from "@evb/devstack";
import { logTopicName, silentLogger } from "@evb/domain";
import { createKafka, ensureTopics } from "@evb/eventlog";
import { migrate, poolOptions } from "@evb/storage";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CACHE = process.env.STACK_DIR ?? join(ROOT, ".cache");
const LOCK = join(CACHE, "start.lock");

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
Starts the broker with its own Kafka (and Postgres/Redis when none answers). Gateway i listens on PORT+i-1 (default 8080).
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
const nGateways = count("gateways", args.gateways, 8);
const nIndexers = count("indexers", args.indexers, 8);
const nNotifiers = count("notifiers", args.notifiers, 8);
const nBrokers = count("kafka-brokers", args["kafka-brokers"], 3);
const groups = (() => {
  try {
    return groupIdsFromEnv("npm start");
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
})();

/** One `npm start` at a time: a second one says so instead of fighting over ports. */
function takeLock(): void {
  mkdirSync(CACHE, { recursive: true });
  if (existsSync(LOCK)) {
    const pid = Number(readFileSync(LOCK, "utf8"));
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {
      alive = false;
    }
    if (alive) {
      process.stderr.write(
        `The broker is already running (npm start, pid ${pid}). Stop it with Ctrl-C in its terminal or \`kill ${pid}\`.\n`,
      );
      process.exit(1);
    }
    rmSync(LOCK, { force: true });
  }
  const fd = openSync(LOCK, "wx");
  writeSync(fd, String(process.pid));
  closeSync(fd);
}

takeLock();
const children: Child[] = [];
let stack: Awaited<ReturnType<typeof startStack>> | undefined;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    consoleProgress("stopping…");
    // Reverse start order: gateways stop taking requests first, the stack goes last.
    for (const c of [...children].reverse()) await c.stop();
    await stack?.stop();
    rmSync(LOCK, { force: true });
    consoleProgress("stopped");
  }
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

try {
  stack = await startStack({
    dir: CACHE,
    kafkaBrokers: process.env.KAFKA_BROKERS,
    databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    kafka: { brokers: nBrokers, basePort: Number(process.env.KAFKA_PORT ?? 9092), heap: "1g" },
    progress: consoleProgress,
  });
  const schema = process.env.DATABASE_SCHEMA ?? "public";
  const topicPrefix = process.env.KAFKA_TOPIC_PREFIX ?? "evb.";
  const replication = String(Math.min(3, nBrokers));
  const pool = new pg.Pool(poolOptions(stack.databaseUrl, schema, 1));
  consoleProgress("postgres: applying migrations…");
  await migrate(pool, schema, silentLogger);
  await pool.end();
  consoleProgress(`kafka: ensuring log topics for groups ${groups.join(",")}…`);
  await ensureTopics(
    createKafka({ brokers: stack.kafkaBrokers.split(","), clientId: "evb-start", logger: silentLogger }),
    groups.map((g) => logTopicName(topicPrefix, g)),
    Number(process.env.KAFKA_PARTITIONS ?? 3),
    Number(process.env.KAFKA_REPLICATION_FACTOR ?? replication),
  );

  const host = process.env.HOST ?? "127.0.0.1";
  const basePort = Number(process.env.PORT ?? 8080);
  const common: Record<string, string> = {
    KAFKA_BROKERS: stack.kafkaBrokers,
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.redisUrl,
    // Under the new name, so the services agree with the topics made above and warn no more.
    GROUP_IDS: groups.join(","),
    GROUPS: "",
    KAFKA_REPLICATION_FACTOR: process.env.KAFKA_REPLICATION_FACTOR ?? replication,
    // The local stack delivers callbacks to receivers on this machine out of the box.
    CALLBACK_ALLOWED_CIDRS: process.env.CALLBACK_ALLOWED_CIDRS ?? "127.0.0.0/8,::1/128",
  };
  const started: Array<Promise<Child>> = [];
  for (let i = 1; i <= nIndexers; i++) {
    const port = basePort + 100 + i - 1;
    started.push(
      startServiceProcess({
        name: `indexer-${i}`,
        service: "indexer",
        env: { ...common, SEALER_INDEX: String(i - 1), HEALTH_PORT: String(port), HOST: host },
        healthUrl: `http://${host}:${port}/health`,
        output: "prefixed",
      }),
    );
  }
  for (let i = 1; i <= nNotifiers; i++) {
    const port = basePort + 200 + i - 1;
    started.push(
      startServiceProcess({
        name: `notifier-${i}`,
        service: "notifier",
        env: { ...common, HEALTH_PORT: String(port), HOST: host },
        healthUrl: `http://${host}:${port}/health`,
        output: "prefixed",
      }),
    );
  }
  const gatewayUrls: string[] = [];
  for (let i = 1; i <= nGateways; i++) {
    const port = basePort + i - 1;
    gatewayUrls.push(`http://${host}:${port}`);
    started.push(
      startServiceProcess({
        name: `gateway-${i}`,
        service: "gateway",
        env: { ...common, PORT: String(port), HOST: host },
        healthUrl: `http://${host}:${port}/health`,
        output: "prefixed",
      }),
    );
  }
  const results = await Promise.allSettled(started);
  for (const r of results) if (r.status === "fulfilled") children.push(r.value);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  for (const c of children) {
    void c.exited.then((code) => {
      if (!stopping)
        consoleProgress(`${c.name} exited unexpectedly (code ${code}); the rest keeps running. Restart npm start to bring it back.`);
    });
  }
  const mounts = process.env.VARIANTS ?? "L:/event-broker,M:/event-m,E:/event-e";
  consoleProgress(
    `ready: gateway ${gatewayUrls.join(", ")} (mounts ${mounts}); Kafka ${stack.kafkaBrokers}; ` +
      `Postgres ${redact(stack.databaseUrl)}; Redis ${redact(stack.redisUrl)}. Try: curl '${gatewayUrls[0]}/event-broker/admin/getVersion'. Ctrl-C stops everything.`,
  );
} catch (err) {
  process.stderr.write(`npm start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  await shutdown(1);
}
