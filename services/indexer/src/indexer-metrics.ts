import { type Logger, logTopicName } from "@evb/domain";
import type { PartitionOffsets } from "@evb/eventlog";
import { DURATION_BUCKETS, type Poller, ServiceMetrics, startPoller } from "@evb/metrics";
import type { BlockSealer, LedgerGaugeValues } from "@evb/storage";

/** Stage times are milliseconds: finer buckets at the low end than DURATION_BUCKETS. */
const STAGE_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 1];

/** The sealing port the indexer calls. */
type SealPort = Pick<BlockSealer, "seal">;

/** The indexer's metrics: sealing rates and time, chain heights, and how far the ledger is behind the log. */
export class IndexerMetrics {
  readonly metrics = new ServiceMetrics("indexer");
  private readonly blocks = this.metrics.counter("indexer_blocks_sealed_total", "Blocks sealed by this indexer, by group", ["group"]);
  private readonly events = this.metrics.counter("indexer_events_sealed_total", "Events sealed into blocks by this indexer, by group", [
    "group",
  ]);
  private readonly sealSeconds = this.metrics.histogram(
    "indexer_seal_duration_seconds",
    "Time to seal one fetched batch (one Postgres transaction per block), by group",
    ["group"],
    DURATION_BUCKETS,
  );
  private readonly stageSeconds = this.metrics.histogram(
    "indexer_stage_duration_seconds",
    "Where a publish's time goes, by stage: log_to_indexer (gateway record built to batch fetched) = gateway_queue (until its produce request was sent) + kafka_to_indexer (produce, ack, fetch); seal, chain_record, round (seal start to receipts sent), offset_commit (background)",
    ["stage"],
    STAGE_BUCKETS,
  );
  private readonly refused = this.metrics.counter(
    "indexer_records_refused_total",
    "Log records not sealed because they were refused (undecodable, or failing the log-identity checks), by group and reason",
    ["group", "reason"],
  );
  private readonly height = this.metrics.gauge("chain_height", "Height of the newest sealed block, by group", ["group"]);
  private readonly lag = this.metrics.gauge(
    "indexer_lag_records",
    "Log records not yet in the ledger (log end offset minus the ledger's next offset), by group and partition",
    ["group", "partition"],
  );

  /**
   * `refused()`: the groups whose log this indexer refuses now (the log-identity checks), read at
   * scrape time.
   */
  watchRefusals(refused: () => ReadonlyMap<string, string>): void {
    this.metrics.gauge(
      "indexer_log_refused",
      "1 while this indexer refuses a group's log (its identity or contents do not match the ledger; see the indexer log), by group",
      ["group"],
      (g) => {
        g.reset();
        for (const group of this.groups) g.set({ group }, refused().has(group) ? 1 : 0);
      },
    );
  }

  private readonly groups: readonly string[];

  constructor(groups: readonly string[]) {
    this.groups = groups;
    for (const group of groups) {
      this.blocks.inc({ group }, 0);
      this.events.inc({ group }, 0);
      this.refused.inc({ group, reason: "undecodable" }, 0);
    }
  }

  /** One stage of the indexer's pipeline took `seconds` (see `PipelineStage`). */
  stage(stage: string, seconds: number): void {
    this.stageSeconds.observe({ stage }, seconds);
  }

  /**
   * Counts `count` refused records of a group (the log-identity checks call this with their
   * reason, e.g. "foreign_log"; undecodable records are counted here).
   */
  onRefused(groupId: string, reason: string, count = 1): void {
    this.refused.inc({ group: groupId, reason }, count);
  }

  /**
   * `sealer` with its work counted and timed. Each sealed record's HTTP request id (when its
   * gateway sent one) goes to a debug line, so a publish can be followed from the access log.
   */
  measure(sealer: SealPort, logger: Logger): SealPort {
    return {
      seal: async (groupId, epoch, batch, opts) => {
        const started = process.hrtime.bigint();
        const sealed = await sealer.seal(groupId, epoch, batch, opts);
        this.sealSeconds.observe({ group: groupId }, Number(process.hrtime.bigint() - started) / 1e9);
        const undecodable = batch.filter((r) => r.record === null).length;
        if (undecodable > 0) this.onRefused(groupId, "undecodable", undecodable);
        for (const b of sealed.blocks) {
          this.blocks.inc({ group: groupId });
          this.events.inc({ group: groupId }, b.events.length);
          for (const e of b.events)
            if (e.record.httpRequestId !== undefined)
              logger.debug({ requestId: e.record.httpRequestId, groupId, height: b.height, eventId: e.eventId }, "event sealed");
        }
        return sealed;
      },
    };
  }

  /**
   * Refreshes heights and lag every `intervalMs`: one Postgres read of the chain heads and
   * ledger positions, one Kafka ListOffsets per group topic.
   */
  poll(
    o: {
      intervalMs: number;
      groups: readonly string[];
      topicPrefix: string;
      /** Each partition's start and end offsets of a topic (`LogInspector.offsets`). */
      offsets: (topic: string) => Promise<PartitionOffsets[]>;
      read: () => Promise<LedgerGaugeValues>;
    },
    logger: Logger,
  ): Poller {
    return startPoller(
      o.intervalMs,
      async () => {
        const [ledger, ends] = await Promise.all([
          o.read(),
          Promise.all(o.groups.map(async (g) => ({ g, offsets: await o.offsets(logTopicName(o.topicPrefix, g)) }))),
        ]);
        for (const h of ledger.heights) this.height.set({ group: h.groupId }, h.height);
        const next = new Map(ledger.positions.map((p) => [`${p.groupId}/${p.partition}`, p.nextOffset]));
        for (const { g, offsets } of ends)
          for (const p of offsets) {
            const end = p.high;
            const at = next.get(`${g}/${p.partition}`) ?? p.low;
            this.lag.set({ group: g, partition: String(p.partition) }, Math.max(0, end - at));
          }
      },
      (err, failing) =>
        failing
          ? logger.warn({ err }, "reading the chain heights or the log ends failed; /metrics shows their last values")
          : logger.info("reading the chain heights and log ends works again"),
    );
  }
}
