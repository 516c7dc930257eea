import { childLogger, errorMessage, type Logger } from "@evb/domain";
import { ChainLogWriter, type KafkaClient } from "@evb/eventlog";
import { LedgerGuard, ledgerReports, NodeRegistry } from "@evb/registry";
import { postgresCheck, redisCheck, serveHealth } from "@evb/runtime";
import {
  DeliveryAttemptStore,
  type DeliveryStore,
  type DispatchStore,
  ResendStore,
  SubscriptionRecords,
  SubscriptionSettingsStore,
  TableMaintenanceStore,
} from "@evb/storage";
import { addressPolicy } from "@evb/subscriptions";
import type { Redis } from "ioredis";
import type pg from "pg";
import { CheckpointWriter } from "./checkpoints/checkpoint-writer.ts";
import type { NotifierConfig } from "./config.ts";
import { AttemptLogPruner } from "./delivery/attempt-log-pruner.ts";
import { TableMaintenance } from "./maintenance/table-maintenance.ts";
import { CallbackTransport } from "./delivery/callback-transport.ts";
import { DeliveryQueue } from "./delivery/delivery-queue.ts";
import { DeliverySlice, sliceSettings } from "./delivery/delivery-slice.ts";
import { DeliveryWorker } from "./delivery/delivery-worker.ts";
import type { StatsCopies } from "./delivery/stats-mirror.ts";
import { WebhookSigner } from "./delivery/webhook-signer.ts";
import type { DispatchMonitor } from "./dispatch/dispatch-monitor.ts";
import { DeliveryHandoff } from "./dispatch/delivery-handoff.ts";
import { Dispatcher } from "./dispatch/dispatcher.ts";
import { LedgerDispatch } from "./dispatch/ledger-dispatch.ts";
import type { NotifierMetrics } from "./notifier-metrics.ts";
import { notifierReadiness } from "./notifier-readiness.ts";

/** How often the notifier looks at the ledger's identity (ms): how long it may go on with a replaced one. */
const LEDGER_GUARD_MS = 500;

/** How often the delivery-attempt log is pruned, ms. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * The first part that stopped for good, if any. Its `onFatal(what)` logs it once, makes /health
 * answer 503 and tells the caller's hook (which exits, so that a supervisor restarts the process).
 */
export function fatalLatch(logger: Logger, hook: ((err: Error) => void) | undefined) {
  let fatal: string | null = null;
  return {
    reason: (): string | null => fatal,
    onFatal: (what: string) => (err: Error) => {
      if (fatal !== null) return;
      fatal = `${what}: ${err.message}`;
      logger.error(
        { err: errorMessage(err), failed: what },
        `${what} stopped: this notifier no longer delivers callbacks; /health answers 503 and the process exits so that a supervisor restarts it`,
      );
      hook?.(err);
    },
  };
}

/**
 * Delivery checkpoints, written to the groups' subscriptions topics (which a rebuilt ledger reads).
 * `start()` does not wait: Kafka is not needed to deliver, so the checkpoints start once their
 * topics are there (or could not be made: the gateways and indexers make them too).
 */
export function checkpointing(config: NotifierConfig, pool: pg.Pool, kafka: KafkaClient, logger: Logger) {
  const subscriptionLog = new ChainLogWriter(kafka);
  const checkpoints = new CheckpointWriter({
    cursors: new SubscriptionRecords(pool),
    topics: subscriptionLog,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    intervalMs: config.DELIVERY_CHECKPOINT_MS,
    logger: childLogger(logger, { component: "checkpoints" }),
    now: Date.now,
  });
  return {
    start: (): void => {
      void subscriptionLog
        .ensureGroupTopics(config.KAFKA_TOPIC_PREFIX, config.GROUP_IDS, config.KAFKA_REPLICATION_FACTOR)
        .catch((err: Error) =>
          logger.warn({ err: errorMessage(err) }, "could not make the subscriptions topics; checkpoints are tried anyway"),
        )
        .finally(() => checkpoints.start());
    },
    close: async (): Promise<void> => {
      await checkpoints.close();
      await subscriptionLog.close();
    },
  };
}

/** Where the ledger's identity is read (`LedgerIdentityStore`: Postgres). */
interface LedgerIdentity {
  read(): Promise<string>;
}

/**
 * Dispatch and delivery only out of the ledger this notifier served, or one an indexer matched
 * since: the identity read from `identity`, the indexers' reports from the node registry in Redis.
 */
export async function guardLedger(config: NotifierConfig, identity: LedgerIdentity, redis: Redis, logger: Logger): Promise<LedgerGuard> {
  const registry = new NodeRegistry({ redis, prefix: config.REDIS_PREFIX });
  const ledgerGuard = new LedgerGuard({
    readIdentity: () => identity.read(),
    reports: () => ledgerReports(registry, config.GROUP_IDS),
    intervalMs: LEDGER_GUARD_MS,
    logger,
  });
  await ledgerGuard.start();
  return ledgerGuard;
}

/** How callbacks are posted: bounded, to allowed addresses only, reusing a window's connections. */
function callbackTransport(config: NotifierConfig): CallbackTransport {
  return new CallbackTransport({
    policy: addressPolicy(config),
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    userAgent: "event-broker-notifier/1",
    // As many as can be in flight to one receiver, so a window's connections are reused.
    idleSockets: Math.min(4096, Math.max(64, config.DELIVERY_CONCURRENCY * config.DELIVERY_WINDOW)),
  });
}

/** Keeps the delivery-attempt log of each subscription it is told about within its bounds. */
function attemptLogPruner(config: NotifierConfig, pool: pg.Pool, logger: Logger): AttemptLogPruner {
  return new AttemptLogPruner({
    store: new DeliveryAttemptStore(pool),
    keep: config.DELIVERY_ATTEMPTS_KEEP,
    keepMs: config.DELIVERY_ATTEMPTS_KEEP_MS,
    intervalMs: PRUNE_INTERVAL_MS,
    logger: childLogger(logger, { component: "attempt-log" }),
  });
}

/** The churning tables' dead rows reclaimed on TABLE_MAINTENANCE_MS (one notifier at a time). */
export function tableMaintenance(config: NotifierConfig, pool: pg.Pool, logger: Logger): TableMaintenance {
  const store = new TableMaintenanceStore(pool);
  return new TableMaintenance({
    vacuum: () => store.vacuum(config.TABLE_MAINTENANCE_TIMEOUT_MS),
    intervalMs: config.TABLE_MAINTENANCE_MS,
    logger: childLogger(logger, { component: "table-maintenance" }),
  });
}

/**
 * Backlogs out to callbacks: the BullMQ queue and worker running delivery slices, the transport and
 * signer they post with (the alerts use them too), and the pruner of the attempt log they write.
 */
export function buildDelivery(
  config: NotifierConfig,
  o: {
    pool: pg.Pool;
    redis: Redis;
    store: DeliveryStore;
    ledgerGuard: LedgerGuard;
    metrics: NotifierMetrics;
    mirror: StatsCopies;
    onFatal: (err: Error) => void;
    logger: Logger;
  },
) {
  const { pool, redis, metrics, logger } = o;
  const queue = new DeliveryQueue({
    connection: redis,
    redisPrefix: config.REDIS_PREFIX,
    store: o.store,
    logger: childLogger(logger, { component: "queue" }),
  });
  const transport = callbackTransport(config);
  const signer = new WebhookSigner(config.WEBHOOK_SECRETS);
  const pruner = attemptLogPruner(config, pool, logger);
  const deliveryLogger = childLogger(logger, { component: "delivery" });
  const slices = new DeliverySlice(
    {
      ledger: o.store,
      resends: new ResendStore(pool),
      settings: new SubscriptionSettingsStore(pool),
      transport,
      signer,
      stats: o.mirror,
      fairness: queue,
      ledgerGuard: o.ledgerGuard,
      observer: metrics.observer,
      attemptLog: pruner,
      logger: deliveryLogger,
    },
    sliceSettings(config),
  );
  const worker = new DeliveryWorker({
    connection: redis,
    redisPrefix: config.REDIS_PREFIX,
    queue,
    slices,
    concurrency: config.DELIVERY_CONCURRENCY,
    lockMs: config.DELIVERY_LOCK_MS,
    onFatal: o.onFatal,
    logger: deliveryLogger,
  });
  return { queue, transport, signer, pruner, worker };
}

/**
 * The ledger's sealed events into the backlogs of the subscriptions they match (`LedgerDispatch`:
 * the store's SQL around `planDispatch`). The subscriptions matched go to a `DeliveryHandoff`:
 * their counters copied and a job each, unless a slice running here reads them anyway.
 */
export function buildDispatcher(
  config: NotifierConfig,
  o: {
    store: DispatchStore;
    ledgerGuard: LedgerGuard;
    worker: DeliveryWorker;
    queue: DeliveryQueue;
    mirror: StatsCopies;
    logger: Logger;
  },
): Dispatcher {
  return new Dispatcher({
    store: new LedgerDispatch(o.store),
    groups: config.GROUP_IDS,
    limits: { maxEvents: config.DISPATCH_BATCH_EVENTS, maxRows: config.DISPATCH_BATCH_ROWS },
    pollMs: config.NOTIFIER_POLL_MS,
    ledgerGuard: o.ledgerGuard,
    handoff: new DeliveryHandoff({ slices: o.worker, jobs: o.queue, stats: o.mirror }),
    logger: childLogger(o.logger, { component: "dispatch" }),
  });
}

/** Counters copied after a crash between a commit and its copy; then every backlog gets a job. */
export async function restoreBacklogs(store: DeliveryStore, queue: DeliveryQueue, mirror: StatsCopies): Promise<void> {
  for (let all = await store.allStats(), i = 0; i < all.length; i += 500) await mirror.copy(all.slice(i, i + 500));
  await queue.ensurePending();
}

/** Every so often, a job for any backlog left without one. */
export function sweepBacklogs(config: NotifierConfig, queue: DeliveryQueue, logger: Logger): NodeJS.Timeout {
  return setInterval(() => {
    queue.ensurePending().catch((err: Error) => logger.warn({ err: errorMessage(err) }, "sweep failed"));
  }, config.NOTIFIER_SWEEP_MS);
}

/** What a store answering again tells: retry a failing dispatch now (`Dispatcher`). */
interface DispatchWaker {
  retryNow(): void;
}

/**
 * Postgres and Redis, which dispatch and delivery both need, looked at in the background so that a
 * probe never waits on them; when one answers again, a dispatch failing because of it is retried at once.
 */
export async function watchStores(config: NotifierConfig, dispatch: DispatchWaker, logger: Logger) {
  const checkLogger = childLogger(logger, { component: "readiness" });
  const retryDispatch = (c: { ok: boolean }) => {
    if (c.ok) dispatch.retryNow();
  };
  const postgres = postgresCheck(config, checkLogger, { onChange: retryDispatch });
  const redis = redisCheck(config, checkLogger, (r) => () => r.ping(), retryDispatch);
  await Promise.all([postgres.start(), redis.start()]);
  return {
    postgres,
    redis,
    close: async (): Promise<void> => {
      await Promise.all([postgres.close(), redis.close()]);
    },
  };
}

/** `/health` (dead only once a part that cannot recover stopped; ready while callbacks flow) and `/metrics`. */
export function serveNotifierHealth(
  config: NotifierConfig,
  o: {
    metrics: NotifierMetrics;
    fatal: () => string | null;
    stores: Awaited<ReturnType<typeof watchStores>>;
    dispatcher: Dispatcher;
    monitor: DispatchMonitor;
    ledgerGuard: LedgerGuard;
    signer: WebhookSigner;
  },
) {
  return serveHealth({
    host: config.HOST,
    port: config.HEALTH_PORT,
    routes: { "/metrics": o.metrics.metrics.handler },
    // Dead only once a part that cannot recover stopped (the process is exiting for a restart).
    live: () => {
      const fatal = o.fatal();
      return fatal === null ? { ok: true } : { ok: false, reason: fatal };
    },
    check: () => ({
      ...notifierReadiness({
        postgres: o.stores.postgres.state(),
        redis: o.stores.redis.state(),
        fatal: o.fatal(),
        failures: o.dispatcher.failures(),
        stuck: o.monitor.stuck(),
        ledger: o.ledgerGuard.refusal(),
      }),
      service: "notifier",
      signing: o.signer.enabled,
    }),
  });
}
