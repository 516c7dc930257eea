import { type Logger, OWNER_ALERT_TYPES, type OwnerAlertType } from "@evb/domain";
import { DURATION_BUCKETS, LATENCY_BUCKETS, type Poller, ServiceMetrics, startPoller, statusClass } from "@evb/metrics";
import type { DeliveryGaugeValues } from "@evb/storage";
import type { AlertOutcome } from "./alerts/alert-sender.ts";
import type { DeliveryObserver } from "./delivery/delivery-slice.ts";

/**
 * The notifier's metrics. Per-subscription detail (which receiver fails, its answers) stays in
 * the admin API (admin/deadLetters, admin/deliveryAttempts): a subscription id or URL as a
 * label would grow the series without bound.
 */
export class NotifierMetrics {
  readonly metrics = new ServiceMetrics("notifier");
  private readonly attempts = this.metrics.counter(
    "delivery_attempts_total",
    "Callback attempts, by result (delivered, failed) and HTTP status class (2xx … 5xx, none when no answer came)",
    ["result", "status_class"],
  );
  private readonly attemptSeconds = this.metrics.histogram(
    "delivery_attempt_duration_seconds",
    "Time of one callback attempt, resolution to answer, by result",
    ["result"],
    DURATION_BUCKETS,
  );
  private readonly latency = this.metrics.histogram(
    "delivery_latency_seconds",
    "Time from an event's block being sealed to its callback's 2xx, retries included",
    [],
    LATENCY_BUCKETS,
  );
  private readonly suspensions = this.metrics.counter(
    "delivery_suspensions_total",
    "Subscriptions suspended (dead-lettered) until replay, by reason (gone, failing_too_long, attempts_exhausted)",
    ["reason"],
  );
  private readonly alerts = this.metrics.counter(
    "owner_alerts_total",
    "Tries of alerts to the owners' alert URLs, by type (subscription.failing, subscription.suspended, subscription.recovered) and outcome (delivered, retried, dropped)",
    ["type", "outcome"],
  );
  private readonly backlogEvents = this.metrics.gauge(
    "delivery_backlog_events",
    "Matched events not yet delivered, over every live subscription",
  );
  private readonly backlogAge = this.metrics.gauge(
    "delivery_backlog_oldest_age_seconds",
    "Age (since its block was sealed) of the oldest undelivered event of a subscription that is neither suspended nor paused; 0 when none waits",
  );
  private readonly deadLettered = this.metrics.gauge("subscriptions_dead_lettered", "Subscriptions suspended until replay");
  private readonly paused = this.metrics.gauge(
    "subscriptions_paused",
    "Live subscriptions their owners paused (their backlogs wait on purpose)",
  );
  private readonly dispatchLag = this.metrics.gauge(
    "dispatch_lag_blocks",
    "Blocks sealed but not yet matched into the subscriptions' backlogs, by group",
    ["group"],
  );

  /** What the delivery worker reports. */
  readonly observer: DeliveryObserver = {
    attempt: (_id, r, ms) => {
      const result = r.delivered ? "delivered" : "failed";
      this.attempts.inc({ result, status_class: statusClass(r.status) });
      this.attemptSeconds.observe({ result }, ms / 1000);
    },
    delivered: (sealedAt) => this.latency.observe(Math.max(0, Date.now() - sealedAt) / 1000),
    suspended: (reason) => this.suspensions.inc({ reason }),
  };

  /** One try of an alert to an owner and how it ended. */
  readonly alertTried = (type: OwnerAlertType, outcome: AlertOutcome) => this.alerts.inc({ type, outcome });

  constructor() {
    // Pre-create the series a dashboard plots, so they read 0 rather than "no data" until the first event.
    for (const result of ["delivered", "failed"]) this.attemptSeconds.zero({ result });
    for (const reason of ["gone", "failing_too_long", "attempts_exhausted"]) this.suspensions.inc({ reason }, 0);
    for (const type of OWNER_ALERT_TYPES) for (const outcome of ["delivered", "retried", "dropped"]) this.alerts.inc({ type, outcome }, 0);
  }

  /** Refreshes the gauges read from Postgres every `intervalMs`. */
  poll(intervalMs: number, read: () => Promise<DeliveryGaugeValues>, logger: Logger): Poller {
    return startPoller(
      intervalMs,
      async () => {
        const v = await read();
        this.backlogEvents.set(v.backlogEvents);
        this.deadLettered.set(v.deadLettered);
        this.paused.set(v.paused);
        const oldest = v.oldestBacklogSealedAt;
        this.backlogAge.set(oldest === null ? 0 : Math.max(0, Date.now() - oldest) / 1000);
        for (const g of v.dispatchLagBlocks) this.dispatchLag.set({ group: g.groupId }, g.blocks);
      },
      (err, failing) =>
        failing
          ? logger.warn({ err }, "reading the delivery gauges failed; /metrics shows their last values")
          : logger.info("reading the delivery gauges works again"),
    );
  }
}
