import type { Consumer, EachBatchPayload, Kafka } from "kafkajs";
import type { Redis } from "ioredis";
import {
  classifyKafkaFailure,
  decodeLogRecord,
  type Logger,
  type LogIdentity,
  logTopicName,
  type OffsetGap,
  type PositionedRecord,
} from "@evb/domain";
import type { LogInspector } from "@evb/eventlog";
import type { BlockSealer, LogEpochStore } from "@evb/storage";
import type { ChainRecorder } from "./chain-recorder.ts";
import { resolveLogEpoch } from "./log-epochs.ts";
import { retryUntil } from "./retry-until.ts";
import { announceInBackground } from "./receipt-publisher.ts";

export interface BlockIndexerOptions {
  kafka: Kafka;
  sealer: Pick<BlockSealer, "seal">;
  epochs: LogEpochStore;
  inspector: LogInspector;
  /** Writes each block's chain record before its receipts. */
  chain: ChainRecorder;
  /** Seals again, from the chain records and the log, blocks the ledger lost (before the log is consumed). */
  rebuild: (groupId: string, logTopic: string) => Promise<{ ok: true } | { ok: false; reason: string }>;
  redis: Redis;
  groups: readonly string[];
  topicPrefix: string;
  redisPrefix: string;
  consumerGroup: string;
  maxBatchBytes: number;
  /** DATABASE_QUERY_TIMEOUT_MS: the longest one Postgres call may take. The Kafka session outlives two. */
  queryTimeoutMs: number;
  /** Readiness: most records a partition may lag behind the log end before the indexer is not ready. */
  readyMaxLag: number;
  logger: Logger;
  /** Called when consuming stopped and cannot resume in this process. */
  onFatal: (err: Error) => void;
  now?: () => number;
}

/** How long the indexer keeps re-joining Kafka in-process before it exits for its supervisor. */
const GIVE_UP_MS = 10 * 60_000;

export interface Readiness {
  ready: boolean;
  reason?: string;
}

/**
 * Consumes the group log topics and turns each fetched batch into a block (rarely several,
 * when an eventId would collide).
 *
 * Positions come from the ledger, not from the consumer group: at start each group's log is
 * matched to an epoch of the ledger (`resolveLogEpoch`), on assignment the consumer seeks to
 * the ledger's positions, and a batch starting past them is not sealed but sought back. The
 * Kafka offset commit only helps the next fetch start close by (and witnesses what was sealed).
 *
 * Order of effects per batch: seal in Postgres (one transaction per block) → write the blocks'
 * chain records to Kafka → start announcing receipts (not awaited: Redis is only a hint) →
 * commit the Kafka offset. A crash between any two steps is safe: before the DB commit nothing
 * happened; after it, a redelivered batch is recognised by `indexed_offsets` and skipped (its
 * receipts are lost, so those publishers see TIMEOUT, but the events are in the ledger), and a
 * block left without its chain record is marked so and gets it from `ChainRecorder` later.
 *
 * Supervision: the Kafka session outlives two database calls, and the consumer heartbeats while
 * a seal runs. A consumer kafkajs gives up on (fenced out of its group after a pause, a
 * non-retriable answer) is replaced in-process with backoff; only after GIVE_UP_MS of failed
 * attempts does `onFatal` ask for the process to be restarted.
 */
export class BlockIndexer {
  private readonly opts: BlockIndexerOptions;
  private readonly now: () => number;
  private readonly groupOfTopic = new Map<string, string>();
  private consumer?: Consumer;
  private started?: Promise<void>;
  private closing = false;
  private readonly epochOf = new Map<string, { epoch: number; identity: LogIdentity }>();
  private readonly refusals = new Map<string, string>();
  private phase: Readiness = { ready: false, reason: "starting" };
  private sealingSince: number | null = null;
  private readonly lag = new Map<string, number>();
  /** Blocks this process sealed. */
  sealedBlocks = 0;
  /** Times the Kafka consumer was replaced after kafkajs gave it up. */
  consumerRestarts = 0;
  /** Batches sought back to the ledger's position. */
  seeksToLedger = 0;

  constructor(opts: BlockIndexerOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    for (const g of opts.groups) this.groupOfTopic.set(logTopicName(opts.topicPrefix, g), g);
  }

  /** The Kafka session timeout: longer than two database calls, so a slow seal is not fenced. */
  get sessionTimeoutMs(): number {
    return Math.max(20_000, 2 * this.opts.queryTimeoutMs + 5_000);
  }

  start(): Promise<void> {
    this.started ??= this.connect();
    return this.started;
  }

  /** Ready to seal: no log refused, a consumer running, no seal stuck, no partition far behind. */
  readiness(): Readiness {
    if (this.refusals.size > 0) return { ready: false, reason: [...this.refusals.values()].join(" | ") };
    if (!this.phase.ready) return this.phase;
    if (this.sealingSince !== null && this.now() - this.sealingSince > 2 * this.opts.queryTimeoutMs) {
      return {
        ready: false,
        reason: `a seal has been running for ${Math.round((this.now() - this.sealingSince) / 1000)} s (Postgres slow, or a lock held)`,
      };
    }
    const behind = [...this.lag].filter(([, n]) => n > this.opts.readyMaxLag);
    if (behind.length > 0) {
      return { ready: false, reason: `lagging behind the log: ${behind.map(([tp, n]) => `${tp} by ${n} records`).join(", ")}` };
    }
    return { ready: true };
  }

  /** Groups whose log this indexer refuses, with the reason. */
  get refusedGroups(): ReadonlyMap<string, string> {
    return this.refusals;
  }

  /** Matches every group's log to a ledger epoch, then consumes the logs it accepts. */
  private async connect(): Promise<void> {
    this.epochOf.clear();
    this.refusals.clear();
    for (const [topic, groupId] of this.groupOfTopic) {
      const rebuilt = await this.opts.rebuild(groupId, topic);
      if (!rebuilt.ok) {
        this.refusals.set(groupId, rebuilt.reason);
        continue;
      }
      const r = await resolveLogEpoch({
        groupId,
        topic,
        consumerGroup: this.opts.consumerGroup,
        inspector: this.opts.inspector,
        store: this.opts.epochs,
        logger: this.opts.logger,
        now: this.now,
      });
      if (r.ok) this.epochOf.set(groupId, { epoch: r.epoch, identity: r.identity });
      else this.refusals.set(groupId, r.reason);
    }
    const topics = [...this.groupOfTopic].filter(([, g]) => this.epochOf.has(g)).map(([t]) => t);
    if (topics.length === 0) {
      this.phase = { ready: false, reason: "every group's log is refused" };
      return;
    }
    await this.opts.chain.start([...this.epochOf.keys()]);
    const consumer = this.opts.kafka.consumer({
      groupId: this.opts.consumerGroup,
      maxBytesPerPartition: this.opts.maxBatchBytes,
      maxWaitTimeInMs: 50,
      sessionTimeout: this.sessionTimeoutMs,
      rebalanceTimeout: this.sessionTimeoutMs * 2,
      heartbeatInterval: 1_000,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    await consumer.connect();
    // A broker whose metadata has not caught up with a just-created topic answers "does not
    // host this topic-partition"; that passes within moments, so retry it for a while.
    for (let attempt = 1; ; attempt++) {
      try {
        await consumer.subscribe({ topics, fromBeginning: true });
        break;
      } catch (err) {
        if (attempt >= 50 || classifyKafkaFailure(err) !== "LOG_NOT_READY") throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    consumer.on(consumer.events.CRASH, (event) => {
      const { error, restart } = event.payload as { error: Error; restart: boolean };
      if (restart) this.opts.logger.warn({ err: error.message }, "Kafka consumer failed; kafkajs restarts it");
      else if (consumer === this.consumer) void this.recover(error);
    });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const assigned = (event.payload as { memberAssignment: Record<string, number[]> }).memberAssignment;
      void this.seekToLedger(consumer, assigned);
    });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.onBatch(consumer, payload),
    });
    this.phase = { ready: true };
  }

  /**
   * kafkajs stopped the consumer for good (fenced out of its group after a long pause, or an
   * answer it does not retry): replace it in this process, with backoff, instead of exiting.
   */
  private async recover(error: Error): Promise<void> {
    this.phase = { ready: false, reason: `Kafka consumer stopped (${error.message}); re-joining` };
    this.opts.logger.warn({ err: error.message }, "Kafka consumer stopped; replacing it in this process");
    const rejoined = await retryUntil({
      before: () => this.consumer?.disconnect().catch(() => {}) ?? Promise.resolve(),
      attempt: () => this.connect(),
      stopped: () => this.closing,
      giveUpMs: GIVE_UP_MS,
      now: this.now,
      onRetry: (err, retryInMs) => {
        this.phase = { ready: false, reason: `Kafka consumer restart failed (${String(err)}); retrying` };
        this.opts.logger.warn({ err: String(err), retryInMs }, "could not restart the Kafka consumer");
      },
      onGiveUp: (err) => this.opts.onFatal(new Error(`Kafka consumer could not be restarted: ${String(err)}`, { cause: err })),
    });
    if (rejoined) {
      this.consumerRestarts++;
      this.opts.logger.info({ restarts: this.consumerRestarts }, "Kafka consumer re-joined its group");
    }
  }

  /** On assignment: start each partition at the ledger's position, and commit it as the group's. */
  private async seekToLedger(consumer: Consumer, assigned: Record<string, number[]>): Promise<void> {
    try {
      for (const [topic, partitions] of Object.entries(assigned)) {
        const groupId = this.groupOfTopic.get(topic);
        const epoch = groupId === undefined ? undefined : this.epochOf.get(groupId)?.epoch;
        if (groupId === undefined || epoch === undefined) continue;
        const positions = await this.opts.epochs.positions(groupId, epoch);
        const entries = partitions.flatMap((p) => {
          const offset = positions.get(p);
          return offset === undefined ? [] : [{ topic, partition: p, offset: String(offset) }];
        });
        for (const e of entries) consumer.seek(e);
        if (entries.length > 0) await consumer.commitOffsets(entries);
      }
    } catch (err) {
      // Harmless: the first batch past the ledger's position is sought back anyway.
      this.opts.logger.warn({ err: String(err) }, "could not seek to the ledger's positions on assignment");
    }
  }

  private async onBatch(consumer: Consumer, payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    if (!isRunning() || isStale() || batch.messages.length === 0) return;
    const groupId = this.groupOfTopic.get(batch.topic);
    const log = groupId === undefined ? undefined : this.epochOf.get(groupId);
    if (groupId === undefined || log === undefined) {
      // A refused group's partitions (handed over by a rebalance): never sealed, and not
      // fetched again and again either.
      consumer.pause([{ topic: batch.topic }]);
      return;
    }
    const records: PositionedRecord[] = batch.messages.map((m) => {
      const decoded = decodeLogRecord(m.value);
      if (!decoded.ok) {
        this.opts.logger.warn(
          { topic: batch.topic, partition: batch.partition, offset: m.offset, error: decoded.error },
          "skipping an undecodable log record",
        );
      }
      return { partition: batch.partition, offset: Number(m.offset), record: decoded.ok ? decoded.record : null };
    });
    // Heartbeat while sealing, so that a seal waiting on a lock or a slow Postgres does not get
    // this member fenced out of the group.
    const beat = setInterval(() => void heartbeat().catch(() => {}), 1_000);
    this.sealingSince = this.now();
    let sealed: Awaited<ReturnType<BlockSealer["seal"]>>;
    try {
      sealed = await this.opts.sealer.seal(groupId, log.epoch, records);
    } finally {
      clearInterval(beat);
      this.sealingSince = null;
    }
    // Chain records before receipts: every block a publisher is told about has its record.
    const recorded = await this.opts.chain.record(log.epoch, log.identity, sealed.blocks);
    for (const block of sealed.blocks) {
      this.sealedBlocks++;
      this.opts.logger.debug({ groupId, height: block.height, events: block.events.length }, "block sealed");
      if (recorded) announceInBackground(this.opts.redis, this.opts.redisPrefix, block, this.opts.logger);
    }
    this.lag.set(`${batch.topic}:${batch.partition}`, Number(batch.offsetLag()));
    if (sealed.gaps.length > 0) {
      for (const gap of sealed.gaps) await this.onGap(consumer, batch.topic, gap);
      return;
    }
    const last = batch.messages[batch.messages.length - 1]?.offset as string;
    resolveOffset(last);
    await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: String(Number(last) + 1) }]);
    await heartbeat();
  }

  /**
   * A batch started past the ledger's position. When the log still holds the records in
   * between, fetch them (seek back); when it does not, they are gone for good: refuse the group.
   */
  private async onGap(consumer: Consumer, topic: string, gap: OffsetGap): Promise<void> {
    const low = (await this.opts.inspector.offsets(topic)).find((p) => p.partition === gap.partition)?.low ?? 0;
    if (low <= gap.expected) {
      this.seeksToLedger++;
      this.opts.logger.info({ ...gap }, "a batch started past the ledger's position; fetching from the ledger's position");
      consumer.seek({ topic, partition: gap.partition, offset: String(gap.expected) });
      return;
    }
    const reason =
      `group ${gap.groupId}: refusing log ${topic}: the log no longer holds records the ledger has not indexed ` +
      `(partition ${gap.partition}: ledger ${gap.expected}, log starts at ${low}); see docs/ledger.md`;
    this.opts.logger.error({ ...gap, topic, logStart: low }, reason);
    this.refusals.set(gap.groupId, reason);
    this.epochOf.delete(gap.groupId);
    consumer.pause([{ topic }]);
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.started) await this.consumer?.disconnect();
    await this.opts.chain.close();
  }
}
