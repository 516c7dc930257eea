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
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { groupIdsFromEnv, redactUrl } from "@evb/config";
import {
  consoleProgress,
  describeTakenPorts,
  httpGet,
  killEveryChild,
  LocalStack,
  type ServiceName,
  StartInterrupted,
  SupervisedService,
  takenPorts,
} from "@evb/devstack";
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

const host = process.env.HOST ?? "127.0.0.1";
const basePort = Number(process.env.PORT ?? 8080);
const kafkaPort = Number(process.env.KAFKA_PORT ?? 9092);
/** Gateway i speaks MQTT over TCP on MQTT_PORT+i-1: 1884 by default, not 1883, where a mosquitto often listens. */
const mqttPort = Number(process.env.MQTT_PORT ?? 1884);

interface Planned {
  name: string;
  service: ServiceName;
  port: number;
}
/** Every service process and the port it answers on: gateway i on PORT+i-1, indexers from +100, notifiers from +200. */
const planned: Planned[] = [
  ...Array.from({ length: nIndexers }, (_, i) => ({ name: `indexer-${i + 1}`, service: "indexer" as const, port: basePort + 100 + i })),
  ...Array.from({ length: nNotifiers }, (_, i) => ({ name: `notifier-${i + 1}`, service: "notifier" as const, port: basePort + 200 + i })),
  ...Array.from({ length: nGateways }, (_, i) => ({ name: `gateway-${i + 1}`, service: "gateway" as const, port: basePort + i })),
];

/**
 * Another stack (another checkout's npm start, a leftover service) on our ports would answer our
 * health checks and make this one look ready; so every port is checked before anything starts.
 */
async function refuseTakenPorts(): Promise<void> {
  const wanted = planned.map((p) => ({ port: p.port, purpose: p.name }));
  for (const [i, p] of planned.filter((q) => q.service === "gateway").entries())
    wanted.push({ port: mqttPort + i, purpose: `${p.name} MQTT` });
  if (!process.env.KAFKA_BROKERS)
    for (let i = 0; i < nBrokers; i++)
      wanted.push(
        { port: kafkaPort + i, purpose: `Kafka broker ${i + 1}` },
        { port: kafkaPort + 100 + i, purpose: `Kafka controller ${i + 1}` },
      );
  const taken = await takenPorts(host, wanted);
  if (taken.length === 0) return;
  process.stderr.write(
    `npm start: ${describeTakenPorts(taken)}\n` +
      "Another broker stack is probably running. Stop it, or give this one other ports, e.g. PORT=18080 KAFKA_PORT=19192 npm start.\n",
  );
  rmSync(LOCK, { force: true });
  process.exit(1);
}

/** A service's readiness: 200 from /readyz, or the reason it gives (or why it could not be asked). */
async function readiness(origin: string): Promise<{ ok: boolean; reason?: string }> {
  try {
    const res = await httpGet(`${origin}/readyz`, 2_000);
    if (res.status === 200) return { ok: true };
    const reason = (() => {
      try {
        return (JSON.parse(res.body) as { reason?: unknown }).reason;
      } catch {
        return undefined;
      }
    })();
    return { ok: false, reason: typeof reason === "string" ? reason : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/**
 * Waits until every service is ready. A service can be alive but not ready for a reason that
 * will not pass by itself (an indexer refusing a log); after a minute that reason is printed
 * and the wait goes on, rather than stopping a stack that runs.
 */
async function untilReady(services: Array<{ name: string; origin: string }>): Promise<void> {
  const deadline = Date.now() + 60_000;
  let told = false;
  while (stopping === undefined) {
    const states = await Promise.all(services.map(async (s) => ({ ...s, ...(await readiness(s.origin)) })));
    const waiting = states.filter((s) => !s.ok);
    if (waiting.length === 0) return;
    if (!told && Date.now() > deadline) {
      told = true;
      consoleProgress(`running, but not ready after 60 s (still waiting): ${waiting.map((s) => `${s.name}: ${s.reason}`).join("; ")}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

takeLock();
const children: SupervisedService[] = [];
// Made before anything starts, so that a Ctrl-C at any moment reaches what it has started.
const stack = new LocalStack({
  dir: CACHE,
  kafkaBrokers: process.env.KAFKA_BROKERS,
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  kafka: { brokers: nBrokers, basePort: kafkaPort, heap: "1g" },
  supervise: true,
  progress: consoleProgress,
});
let stopping: Promise<never> | undefined;

/** The one shutdown: later calls (a start step failing because of it) wait for it rather than exit early. */
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    consoleProgress("stopping…");
    // Reverse start order: gateways stop taking requests first, the stack goes last.
    for (const c of [...children].reverse()) await c.stop();
    await stack.stop();
    rmSync(LOCK, { force: true });
    consoleProgress("stopped");
    process.exit(code);
  })();
  return stopping;
}

/** After each step of the start: once a shutdown has begun, nothing more may start (it waits for the exit). */
async function unlessStopping(): Promise<void> {
  if (stopping) await stopping;
}

let signals = 0;
function onSignal(): void {
  if (++signals === 1) {
    void shutdown(0);
    return;
  }
  // Whoever presses Ctrl-C twice will not wait for a clean stop; still, nothing may outlive us.
  killEveryChild();
  rmSync(LOCK, { force: true });
  consoleProgress("stopped at once: killed every process it started");
  process.exit(130);
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

await refuseTakenPorts().catch((err: unknown) => {
  rmSync(LOCK, { force: true });
  throw err;
});

try {
  await unlessStopping();
  const infra = await stack.start();
  const schema = process.env.DATABASE_SCHEMA ?? "public";
  const topicPrefix = process.env.KAFKA_TOPIC_PREFIX ?? "evb.";
  const replication = String(Math.min(3, nBrokers));
  const pool = new pg.Pool(poolOptions(infra.databaseUrl, schema, 1));
  consoleProgress("postgres: applying migrations…");
  await migrate(pool, schema, silentLogger);
  await pool.end();
  await unlessStopping();
  consoleProgress(`kafka: ensuring log topics for groups ${groups.join(",")}…`);
  await ensureTopics(
    createKafka({ brokers: infra.kafkaBrokers.split(","), clientId: "evb-start", logger: silentLogger }),
    groups.map((g) => logTopicName(topicPrefix, g)),
    Number(process.env.KAFKA_PARTITIONS ?? 3),
    Number(process.env.KAFKA_REPLICATION_FACTOR ?? replication),
  );
  await unlessStopping();

  const common: Record<string, string> = {
    KAFKA_BROKERS: infra.kafkaBrokers,
    DATABASE_URL: infra.databaseUrl,
    REDIS_URL: infra.redisUrl,
    // Under the new name, so the services agree with the topics made above and warn no more.
    GROUP_IDS: groups.join(","),
    GROUPS: "",
    KAFKA_REPLICATION_FACTOR: process.env.KAFKA_REPLICATION_FACTOR ?? replication,
    // The local stack delivers callbacks to receivers on this machine out of the box.
    CALLBACK_ALLOWED_CIDRS: process.env.CALLBACK_ALLOWED_CIDRS ?? "127.0.0.0/8,::1/128",
  };
  const origin = (port: number) => `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  for (const p of planned) {
    children.push(
      new SupervisedService({
        name: p.name,
        service: p.service,
        env: {
          ...common,
          HOST: host,
          ...(p.service === "gateway"
            ? { PORT: String(p.port), MQTT_PORT: String(mqttPort + p.port - basePort) }
            : { HEALTH_PORT: String(p.port) }),
          ...(p.service === "indexer" ? { SEALER_INDEX: String(Number(p.name.split("-")[1]) - 1) } : {}),
        },
        // Started (and restarted) once alive; readiness is awaited below, as it may depend on others.
        healthUrl: `${origin(p.port)}/livez`,
        output: "prefixed",
        progress: consoleProgress,
      }),
    );
  }
  const backends = children.filter((c) => !c.name.startsWith("gateway-"));
  const gateways = children.filter((c) => c.name.startsWith("gateway-"));
  for (const batch of [backends, gateways]) {
    const results = await Promise.allSettled(batch.map((c) => c.start()));
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }
  const gatewayUrls = planned.filter((p) => p.service === "gateway").map((p) => origin(p.port));
  const mounts = process.env.VARIANTS ?? "L:/event-broker,M:/event-m,E:/event-e";
  const width = Math.max(...planned.map((p) => p.name.length));
  await untilReady(planned.map((p) => ({ name: p.name, origin: origin(p.port) })));
  // Ctrl-C while waiting: shutdown() is exiting the process; never print "ready" for it.
  await unlessStopping();
  consoleProgress(
    `ready: gateway ${gatewayUrls.join(", ")} (mounts ${mounts}); Kafka ${infra.kafkaBrokers}; ` +
      `Postgres ${redactUrl(infra.databaseUrl)}; Redis ${redactUrl(infra.redisUrl)}. Try: curl '${gatewayUrls[0]}/event-broker/admin/getVersion'. MQTT: mqtt://${host}:${mqttPort}. Console: ${gatewayUrls[0]}/console/. Ctrl-C stops everything.\n` +
      `health (liveness /livez, readiness /readyz with the reason when not ready) and Prometheus metrics (/metrics):\n${planned
        .map((p) => `  ${p.name.padEnd(width)}  ${origin(p.port)}/livez  ${origin(p.port)}/readyz  ${origin(p.port)}/metrics`)
        .join("\n")}`,
  );
} catch (err) {
  // A start step cut short by Ctrl-C is no failure: the shutdown it belongs to finishes and
  // exits. A terminal's Ctrl-C also ends a synchronous step (initdb, the Kafka storage format)
  // before our handler runs; one turn of the event loop usually lets the handler see the signal
  // first, and a step known to be ended by a signal waits for it up to 2 s.
  await new Promise((r) => setImmediate(r));
  for (let waited = 0; err instanceof StartInterrupted && !stopping && waited < 2_000; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await unlessStopping();
  process.stderr.write(`npm start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  await shutdown(1);
}
