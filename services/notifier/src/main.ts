import { childLogger, type Logger } from "@evb/domain";
import { checkKafkaLink, openKafka, openPostgres, openRedis, prepareStorage, runService } from "@evb/runtime";
import {
  DeliveryStore,
  DispatchStore,
  deliveryGaugeValues,
  LedgerIdentityStore,
  OwnerAlertStore,
  SubscriptionSettingsStore,
  secretsAtRest,
} from "@evb/storage";
import { alertSender } from "./alerts/alert-wiring.ts";
import { loadNotifierConfig, type NotifierConfig } from "./config.ts";
import { DispatchMonitor } from "./dispatch/dispatch-monitor.ts";
import { StatsMirror } from "./delivery/stats-mirror.ts";
import { TestDeliveries } from "./delivery/test-delivery.ts";
import { listenForHints } from "./dispatch/hint-listener.ts";
import { NotifierMetrics } from "./notifier-metrics.ts";
import {
  buildDelivery,
  buildDispatcher,
  checkpointing,
  fatalLatch,
  guardLedger,
  restoreBacklogs,
  serveNotifierHealth,
  sweepBacklogs,
  tableMaintenance,
  watchStores,
} from "./notifier-parts.ts";

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
  secretsAtRest(config.SECRETS_KEY, logger);
  const fatal = fatalLatch(logger, hooks.onFatal);
  const pool = openPostgres(config, logger);
  const redis = openRedis(config, logger, "bullmq");
  const subscriber = openRedis(config, logger, "subscriber");
  await prepareStorage(config, pool, null, logger);
  const kafka = openKafka(config, "evb-notifier", logger);
  // The notifier creates no log topics (prepareStorage gets no client) but writes checkpoints to Kafka.
  await checkKafkaLink(kafka, config);
  const checkpoints = checkpointing(config, pool, kafka, logger);
  const store = new DeliveryStore(pool, { alertFailingAfter: config.ALERT_FAILING_AFTER_ATTEMPTS });
  const ledgerGuard = await guardLedger(config, new LedgerIdentityStore(pool), redis, logger);
  const mirror = new StatsMirror({ redis, prefix: config.REDIS_PREFIX, logger });
  const metrics = new NotifierMetrics();
  const shared = { pool, redis, store, ledgerGuard, metrics, mirror, logger };
  const { queue, transport, signer, pruner, worker } = buildDelivery(config, { ...shared, onFatal: fatal.onFatal("delivery worker") });
  const dispatchStore = new DispatchStore(pool);
  const dispatcher = buildDispatcher(config, { store: dispatchStore, ledgerGuard, worker, queue, mirror, logger });

  await restoreBacklogs(store, queue, mirror);
  await listenForHints(subscriber, config.REDIS_PREFIX, { dispatch: dispatcher, delivery: queue }, logger);
  const tests = new TestDeliveries({
    redis,
    prefix: config.REDIS_PREFIX,
    settings: new SubscriptionSettingsStore(pool),
    transport,
    signer,
    logger: childLogger(logger, { component: "test-delivery" }),
  });
  await tests.listen(subscriber);
  dispatcher.start();
  worker.start();
  const alerts = alertSender(config, { outbox: new OwnerAlertStore(pool), transport, signer, metrics, logger });
  alerts.start();
  // Kafka is not needed to deliver: checkpoints start once their topics are there, without holding the start.
  checkpoints.start();
  const sweep = sweepBacklogs(config, queue, logger);
  const maintenance = tableMaintenance(config, pool, logger);

  const gauges = metrics.poll(config.METRICS_POLL_MS, () => deliveryGaugeValues(pool), childLogger(logger, { component: "metrics" }));
  const monitor = new DispatchMonitor({ store: dispatchStore, groups: config.GROUP_IDS, stuckAfterMs: config.DISPATCH_STUCK_MS, logger });
  const stores = await watchStores(config, dispatcher, logger);
  const health = await serveNotifierHealth(config, { metrics, fatal: fatal.reason, stores, dispatcher, monitor, ledgerGuard, signer });
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
        await stores.close();
        gauges.close();
        pruner.close();
        maintenance.close();
        monitor.close();
        clearInterval(sweep);
        ledgerGuard.close();
        subscriber.disconnect();
        await dispatcher.close();
        await worker.close();
        await alerts.close();
        await checkpoints.close();
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
