import { bestEffort, childLogger, type Logger } from "@evb/domain";
import { LedgerGuard, NodeRegistry, ledgerReports } from "@evb/registry";
import { openKafka, openPostgres, openRedis, postgresCheck, prepareStorage, redisCheck, runService, serveHealth } from "@evb/runtime";
import { ChainLogWriter } from "@evb/eventlog";
import {
  DeliveryAttemptStore,
  DeliveryStore,
  SubscriptionSettingsStore,
  OwnerAlertStore,
  ResendStore,
  DispatchStore,
  deliveryGaugeValues,
  SubscriptionRecords,
  type SubscriptionStats,
} from "@evb/storage";
import { addressPolicy, STATS_MIRROR_TIMEOUT_MS, statsEntry, writeStats } from "@evb/subscriptions";
import { CheckpointWriter } from "./checkpoints/checkpoint-writer.ts";
import { loadNotifierConfig, type NotifierConfig } from "./config.ts";
import { AttemptLogPruner } from "./delivery/attempt-log-pruner.ts";
import { CallbackTransport } from "./delivery/callback-transport.ts";
import { DeliveryQueue } from "./delivery/delivery-queue.ts";
import { DeliverySlice, sliceSettings } from "./delivery/delivery-slice.ts";
import { DeliveryWorker } from "./delivery/delivery-worker.ts";
import { WebhookSigner } from "./delivery/webhook-signer.ts";
import { alertSender } from "./alerts/alert-wiring.ts";
import { DispatchMonitor } from "./dispatch/dispatch-monitor.ts";
import { Dispatcher } from "./dispatch/dispatcher.ts";
import { listenForHints } from "./dispatch/hint-listener.ts";
import { notifierReadiness } from "./notifier-readiness.ts";
import { NotifierMetrics } from "./notifier-metrics.ts";

/** How often the notifier looks at the ledger's identity (ms): how long it may go on with a replaced one. */
const LEDGER_GUARD_MS = 500;

/** How often the delivery-attempt log is pruned, ms. */
const PRUNE_INTERVAL_MS = 60_000;

export interface RunningNotifier {
  healthUrl: string;
  metricsUrl: string;
  close(): Promise<void>;
}

export interface NotifierHooks {
  /**
   * A part that cannot recover stopped (the delivery worker's run loop): /health already answers
   * 503; the caller should close and exit non-zero so that a supervisor starts a fresh process.
   */
  onFatal?: (err: Error) => void;
}

/**
 * The notifier's composition root: the dispatcher (ledger → per-subscription backlogs), the
 * BullMQ delivery worker (backlogs → callbacks), a sweep that restarts any backlog left without
 * a job, and the health endpoint. `close()` stops in reverse order.
 */
export async function startNotifier(config: NotifierConfig, logger: Logger, hooks: NotifierHooks = {}): Promise<RunningNotifier> {
  let fatal: string | null = null;
  const onFatal = (what: string) => (err: Error) => {
    if (fatal !== null) return;
    fatal = `${what}: ${err.message}`;
    logger.error(
      { err: err.message, failed: what },
      `${what} stopped: this notifier no longer delivers callbacks; /health answers 503 and the process exits so that a supervisor restarts it`,
    );
    hooks.onFatal?.(err);
  };
  const pool = openPostgres(config, logger);
  const redis = openRedis(config, logger, "bullmq");
  const subscriber = openRedis(config, logger, "subscriber");
  await prepareStorage(config, pool, null, logger);
  // Delivery checkpoints go to the groups' subscriptions topics, which a rebuilt ledger reads.
  const kafka = openKafka(config, "evb-notifier", logger);
  const subscriptionLog = new ChainLogWriter(kafka);
  const checkpoints = new CheckpointWriter({
    deliveredSince: (since) => new SubscriptionRecords(pool).deliveredSince(since),
    write: (topic, messages) => subscriptionLog.writeMessages(topic, messages),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    intervalMs: config.DELIVERY_CHECKPOINT_MS,
    logger: childLogger(logger, { component: "checkpoints" }),
    now: Date.now,
  });
  const store = new DeliveryStore(pool, { alertFailingAfter: config.ALERT_FAILING_AFTER_ATTEMPTS });
  // Dispatch and delivery only out of the ledger this notifier served, or one an indexer matched since.
  const registry = new NodeRegistry({ redis, prefix: config.REDIS_PREFIX });
  const ledgerGuard = new LedgerGuard({
    readIdentity: async () => (await pool.query<{ id: string }>("SELECT id FROM ledger_identity")).rows[0]?.id ?? "",
    reports: () => ledgerReports(registry, config.GROUP_IDS),
    intervalMs: LEDGER_GUARD_MS,
    logger,
  });
  await ledgerGuard.start();
  // Counter copies are a cache (Postgres holds the truth): bounded, so a Redis stall does not
  // also stall a delivery slice that still holds its Postgres lease.
  // A failure (not a timeout) is passed on, so the dispatcher or the slice sees it.
  const mirror = (stats: SubscriptionStats[]) =>
    bestEffort(() => writeStats(redis, config.REDIS_PREFIX, stats.map(statsEntry)), {
      what: `copy ${stats.length} subscription counters`,
      cost: "they follow with the next change",
      timeoutMs: STATS_MIRROR_TIMEOUT_MS,
      logger,
      rethrow: true,
    });
  const queue = new DeliveryQueue({
    connection: redis,
    redisPrefix: config.REDIS_PREFIX,
    store,
    logger: childLogger(logger, { component: "queue" }),
  });
  const transport = new CallbackTransport({
    policy: addressPolicy(config),
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    userAgent: "event-broker-notifier/1",
    // As many as can be in flight to one receiver, so a window's connections are reused.
    idleSockets: Math.min(4096, Math.max(64, config.DELIVERY_CONCURRENCY * config.DELIVERY_WINDOW)),
  });
  const signer = new WebhookSigner(config.WEBHOOK_SECRETS);
  const metrics = new NotifierMetrics();
  const pruner = new AttemptLogPruner({
    store: new DeliveryAttemptStore(pool),
    keep: config.DELIVERY_ATTEMPTS_KEEP,
    keepMs: config.DELIVERY_ATTEMPTS_KEEP_MS,
    intervalMs: PRUNE_INTERVAL_MS,
    logger: childLogger(logger, { component: "attempt-log" }),
  });
  const deliveryLogger = childLogger(logger, { component: "delivery" });
  const slices = new DeliverySlice(
    {
      ledger: store,
      resends: new ResendStore(pool),
      settings: new SubscriptionSettingsStore(pool),
      transport,
      signer,
      onStats: mirror,
      fairness: queue,
      ledgerRefusal: () => ledgerGuard.refusal(),
      observer: {
        ...metrics.observer,
        attempt: (id, result, ms) => {
          metrics.observer.attempt(id, result, ms);
          pruner.touch(id);
        },
      },
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
    onFatal: onFatal("delivery worker"),
    logger: deliveryLogger,
  });
  const dispatchStore = new DispatchStore(pool);
  const dispatcher = new Dispatcher({
    store: dispatchStore,
    groups: config.GROUP_IDS,
    limits: { maxEvents: config.DISPATCH_BATCH_EVENTS, maxRows: config.DISPATCH_BATCH_ROWS },
    pollMs: config.NOTIFIER_POLL_MS,
    paused: () => ledgerGuard.refusal(),
    onMatched: async (touched) => {
      // A slice running here for one of them reads again instead of ending, so its job needs no
      // ensure (a slice already past its last read is covered by the re-check when its job ends).
      const idle = worker.notify(touched.map((t) => t.id));
      // The counter copy and the jobs do not depend on each other: one round trip's wait, not two.
      await Promise.all([mirror(touched), queue.ensure(idle.map((id) => ({ id, nextAttemptAt: 0 })))]);
    },
    logger: childLogger(logger, { component: "dispatch" }),
  });

  // Counters copied after a crash between a commit and its copy; then every backlog gets a job.
  for (let all = await store.allStats(), i = 0; i < all.length; i += 500) await mirror(all.slice(i, i + 500));
  await queue.ensurePending();

  await listenForHints(subscriber, config.REDIS_PREFIX, { nudge: (g) => dispatcher.nudge(g), wake: (ids) => queue.wake(ids) }, logger);
  dispatcher.start();
  worker.start();
  const alerts = alertSender(config, { outbox: new OwnerAlertStore(pool), transport, signer, metrics, logger });
  alerts.start();
  // Kafka is not needed to deliver: checkpoints start once their topics are there (or could not
  // be made: the gateways and indexers make them too), without holding the notifier's start.
  void subscriptionLog
    .ensureGroupTopics(config.KAFKA_TOPIC_PREFIX, config.GROUP_IDS, config.KAFKA_REPLICATION_FACTOR)
    .catch((err: Error) => logger.warn({ err: err.message }, "could not make the subscriptions topics; checkpoints are tried anyway"))
    .finally(() => checkpoints.start());
  const sweep = setInterval(() => {
    queue.ensurePending().catch((err: Error) => logger.warn({ err: err.message }, "sweep failed"));
  }, config.NOTIFIER_SWEEP_MS);

  const gauges = metrics.poll(config.METRICS_POLL_MS, () => deliveryGaugeValues(pool), childLogger(logger, { component: "metrics" }));
  const monitor = new DispatchMonitor({
    store: dispatchStore,
    groups: config.GROUP_IDS,
    stuckAfterMs: config.DISPATCH_STUCK_MS,
    logger,
  });
  // Dispatch and delivery need both stores. Looked at in the background, so that a probe never
  // waits on them; when one answers again, a dispatch failing because of it is retried at once.
  const checkLogger = childLogger(logger, { component: "readiness" });
  const retryDispatch = (c: { ok: boolean }) => {
    if (c.ok) dispatcher.retryNow();
  };
  const postgresLook = postgresCheck(config, checkLogger, { onChange: retryDispatch });
  const redisLook = redisCheck(config, checkLogger, (r) => () => r.ping(), retryDispatch);
  await Promise.all([postgresLook.start(), redisLook.start()]);
  const health = await serveHealth({
    host: config.HOST,
    port: config.HEALTH_PORT,
    routes: { "/metrics": metrics.metrics.handler },
    // Dead only once a part that cannot recover stopped (the process is exiting for a restart).
    live: () => (fatal === null ? { ok: true } : { ok: false, reason: fatal }),
    check: () => ({
      ...notifierReadiness({
        postgres: postgresLook.state(),
        redis: redisLook.state(),
        fatal,
        failures: dispatcher.failures(),
        stuck: monitor.stuck(),
        ledger: ledgerGuard.refusal(),
      }),
      service: "notifier",
      signing: signer.enabled,
    }),
  });
  const healthUrl = health.url;
  const metricsUrl = health.url.replace(/\/health$/, "/metrics");
  logger.info({ healthUrl, metricsUrl, groups: config.GROUP_IDS, signing: signer.enabled }, "notifier running");

  let closed: Promise<void> | undefined;
  return {
    healthUrl,
    metricsUrl,
    close() {
      closed ??= (async () => {
        health.close();
        await Promise.all([postgresLook.close(), redisLook.close()]);
        gauges.close();
        pruner.close();
        monitor.close();
        clearInterval(sweep);
        ledgerGuard.close();
        subscriber.disconnect();
        await dispatcher.close();
        await worker.close();
        await alerts.close();
        await checkpoints.close();
        await subscriptionLog.close();
        await queue.close();
        transport.close();
        redis.disconnect();
        await pool.end();
      })();
      return closed;
    },
  };
}

/** After a fatal failure: close what can be closed (bounded), then exit 1 for the supervisor. */
function exitAfterFatal(running: Promise<RunningNotifier>): void {
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 10_000).unref();
  void running.then((n) => n.close()).finally(() => process.exit(1));
}

if (import.meta.main) {
  runService("notifier", loadNotifierConfig, (config, logger) => {
    const running: Promise<RunningNotifier> = startNotifier(config, logger, { onFatal: () => exitAfterFatal(running) });
    return running;
  });
}
