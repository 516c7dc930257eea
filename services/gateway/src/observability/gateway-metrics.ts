import { DURATION_BUCKETS, ServiceMetrics } from "@evb/metrics";

/** What a publish ended as: the SendResult status (E answers 200202 where L and M say TIMEOUT or ERROR). */
export type PublishOutcome = "SUCCESS" | "TIMEOUT" | "ERROR";

/** The gateway's metrics; every label value comes from a bounded set (variants, operations, codes, groups). */
export class GatewayMetrics {
  readonly metrics = new ServiceMetrics("gateway");
  readonly requests = this.metrics.counter(
    "http_requests_total",
    "HTTP requests answered, by variant, operation (unknown for a path that names none) and result (the broker code, the publish status, or http_<status> for a non-200 answer)",
    ["variant", "operation", "result"],
  );
  readonly requestSeconds = this.metrics.histogram(
    "http_request_duration_seconds",
    "Time from a request's arrival to its answer, by variant and operation",
    ["variant", "operation"],
    DURATION_BUCKETS,
  );
  private readonly publishes = this.metrics.counter("publish_total", "Publishes that reached the log, by group and outcome", [
    "group",
    "outcome",
  ]);
  private readonly publishSeconds = this.metrics.histogram(
    "publish_duration_seconds",
    "Time from a publish request's arrival to its answer, by group and outcome",
    ["group", "outcome"],
    DURATION_BUCKETS,
  );
  private readonly batchRecords = this.metrics.histogram(
    "log_produce_batch_records",
    "Records per Kafka produce request (concurrent publishes gathered into one)",
    [],
    [1, 2, 5, 10, 20, 50, 100, 200, 500],
  );

  private readonly feedReads = this.metrics.counter(
    "ledger_feed_reads_total",
    "Ledger reads of the STOMP and MQTT subscriptions, by read: head, page (of events), topics (of a block range, once per range for every subscription of a group), locate (a start event)",
    ["read"],
  );

  /** `waiting()`: appends waiting for Kafka (queued and in flight); `cap`: the most that may wait before publishes answer ERROR. */
  constructor(log: { waiting: () => number; cap: () => number }) {
    this.metrics.gauge("log_appends_waiting", "Publishes waiting for Kafka to acknowledge their append", [], (g) => g.set(log.waiting()));
    this.metrics.gauge(
      "log_appends_waiting_cap",
      "Most publishes that may wait for Kafka; beyond it a publish answers ERROR at once",
      [],
      (g) => g.set(log.cap()),
    );
  }

  /** Publishes answered per group since start, every outcome: what publish_total sums to, read by the console's history. */
  private readonly answered = new Map<string, number>();

  publish(group: string, outcome: PublishOutcome, seconds: number): void {
    this.answered.set(group, (this.answered.get(group) ?? 0) + 1);
    this.publishes.inc({ group, outcome });
    this.publishSeconds.observe({ group, outcome }, seconds);
  }

  /** Publishes this gateway answered in `group` since it started. */
  publishesAnswered(group: string): number {
    return this.answered.get(group) ?? 0;
  }

  feedRead(read: "head" | "page" | "topics" | "locate"): void {
    this.feedReads.inc({ read });
  }

  produceBatch(records: number): void {
    this.batchRecords.observe(records);
  }
}
