import { decodeLogRecord, errorMessage, type Logger, type OffsetGap, type PositionedRecord } from "@evb/domain";
import { LedgerFenceError, type SealResult } from "@evb/storage";
import { traceparentOfHeaders, tracingOn } from "@evb/telemetry";
import type { GroupLog, IndexerState } from "./indexer-state.ts";
import { OffsetCommitter } from "./offset-committer.ts";
import type { ChainRecords, FetchedBatch, Ledger, LogConsumer, LogStarts, Receipts, TopicPartitionOffset } from "./ports.ts";
import { traceSeal } from "./seal-trace.ts";

export interface BatchPipelineOptions {
  ledger: Ledger;
  chain: ChainRecords;
  receipts: Receipts;
  logStarts: LogStarts;
  state: IndexerState;
  logger: Logger;
  now: () => number;
  /** Where a publish's time goes on the indexer's side (seconds per stage); see `IndexerMetrics.stage`. */
  timings?: (stage: PipelineStage, seconds: number) => void;
  /** A seal was fenced: the group is refused already; match the logs to the ledger again. */
  onFence: (reason: string) => void;
}

/**
 * `log_to_indexer`: from the gateway building a batch's first record to the batch reaching the
 * indexer, in two parts: `gateway_queue` (until the gateway's produce request carrying it was
 * sent) and `kafka_to_indexer` (produce, Kafka's acknowledgement, the fetch); `seal`, `chain_record`: those steps of
 * one round; `offset_commit`: one commit request (in the background); `round`: from the seal's
 * start to the receipts sent.
 */
export type PipelineStage = "log_to_indexer" | "gateway_queue" | "kafka_to_indexer" | "seal" | "chain_record" | "offset_commit" | "round";

/** A fetched batch waiting for its group's next seal. */
interface Waiting {
  consumer: LogConsumer;
  batch: FetchedBatch;
  records: PositionedRecord[];
  done: (err?: unknown) => void;
}

/**
 * Least time between two Kafka offset commits (ms). A commit takes the group coordinator several
 * milliseconds and only witnesses what the ledger holds, so it is not worth one per seal.
 */
const OFFSET_COMMIT_INTERVAL_MS = 200;

/** How often the consumer heartbeats while a seal runs (ms). */
const HEARTBEAT_WHILE_SEALING_MS = 1_000;

/**
 * What happens to fetched batches: decode → seal in Postgres → move the partitions on → write
 * the blocks' chain records to Kafka → announce the receipts (not awaited: Redis is only a
 * hint) → commit the Kafka offsets (in the background: `OffsetCommitter`).
 *
 * The batches of a group that arrive together (the consumer hands over the partitions of one fetch
 * at once) are sealed together, in one `Ledger.seal`: one block, rarely several, in one
 * transaction each; the planner keeps each partition's order and skips what is indexed
 * already. Batches arriving while a group's seal runs wait for the next one.
 *
 * A round's batches are done (so the next fetch may start) once it is sealed and the previous
 * round is announced: the chain records and receipts of round n go out while round n + 1 is
 * fetched and sealed, and never more than one round behind. Per group, chain records, receipts
 * and offset commits keep the order of the seals.
 *
 * A crash between any two steps is safe: before the database commit nothing happened; after it,
 * a redelivered batch is recognised by `indexed_offsets` and skipped (its receipts are lost, so
 * those publishers see TIMEOUT, but the events are in the ledger), and a block left without its
 * chain record is marked so and gets it from `ChainRecorder` later.
 */
export class BatchPipeline {
  private readonly o: BatchPipelineOptions;
  private readonly pending = new Map<string, Waiting[]>();
  private readonly running = new Map<string, Promise<void>>();
  /** Per group: the last round's chain records and receipts, which the next round's follow. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly committer: OffsetCommitter;

  constructor(o: BatchPipelineOptions) {
    this.o = o;
    this.committer = new OffsetCommitter({
      logger: o.logger,
      minIntervalMs: OFFSET_COMMIT_INTERVAL_MS,
      now: o.now,
      timed: (seconds) => o.timings?.("offset_commit", seconds),
    });
  }

  /** Handles one partition's batch; resolves once it is sealed and the round before it announced. */
  onBatch(consumer: LogConsumer, batch: FetchedBatch): Promise<void> {
    if (!batch.current() || batch.messages.length === 0) return Promise.resolve();
    const groupId = this.o.state.groupOfTopic.get(batch.topic);
    if (groupId === undefined || !this.o.state.logs.has(groupId)) {
      // A refused group's partitions (handed over by a rebalance): never sealed, and not
      // fetched again and again either.
      consumer.pause(batch.topic);
      return Promise.resolve();
    }
    const traced = tracingOn();
    const records: PositionedRecord[] = batch.messages.map((m) => {
      const decoded = decodeLogRecord(m.value);
      if (!decoded.ok) {
        this.o.logger.warn(
          { topic: batch.topic, partition: batch.partition, offset: m.offset, error: decoded.error },
          "skipping an undecodable log record",
        );
      }
      const record = decoded.ok ? decoded.record : null;
      return { partition: batch.partition, offset: m.offset, record, traceparent: traced ? traceparentOfHeaders(m.headers) : undefined };
    });
    const at = records.findIndex((r) => r.record !== null);
    const first = records[at]?.record;
    if (first) {
      // The gateway stamps publishedAt when it builds the record; the producer stamps the record when
      // its produce request is sent. Same machine clock in the usual deployment, else indicative.
      const publishedAt = first.publishedAt;
      const sentAt = batch.messages[at]?.timestampMs ?? publishedAt;
      this.time("log_to_indexer", publishedAt);
      this.o.timings?.("gateway_queue", Math.max(0, sentAt - publishedAt) / 1000);
      this.time("kafka_to_indexer", sentAt);
    }
    return new Promise((resolve, reject) => {
      const queue = this.pending.get(groupId) ?? [];
      queue.push({ consumer, batch, records, done: (err) => (err === undefined ? resolve() : reject(err)) });
      this.pending.set(groupId, queue);
      if (!this.running.has(groupId)) this.running.set(groupId, this.drain(groupId));
    });
  }

  /** Seals the group's waiting batches, round after round, until none wait. */
  private async drain(groupId: string): Promise<void> {
    // Let the other partitions of the same fetch, handed over in this same turn, join the round.
    await new Promise((r) => setImmediate(r));
    for (;;) {
      const round = this.pending.get(groupId) ?? [];
      if (round.length === 0) {
        this.running.delete(groupId); // in the same turn as the check: a batch arriving later starts a new drain
        return;
      }
      this.pending.set(groupId, []);
      try {
        await this.sealRound(groupId, round);
        this.o.state.sealSucceeded();
        for (const w of round) w.done();
      } catch (err) {
        // Readiness says so until a seal succeeds again (the batches are fetched again meanwhile).
        this.o.state.sealFailed(`the last seal failed: ${err instanceof Error ? err.message : String(err)}`);
        for (const w of round) w.done(err);
      }
    }
  }

  /**
   * Seals the batches of one group that waited together, then moves their partitions on (or
   * seeks back, or refuses, on a gap); the chain records, receipts and Kafka offsets follow in
   * `announce`, after the previous round's, while the next fetch may already be sealed.
   */
  private async sealRound(groupId: string, round: readonly Waiting[]): Promise<void> {
    const log = this.o.state.logs.get(groupId);
    if (!log) {
      // Refused while these waited (a gap the log no longer holds).
      for (const w of round) w.consumer.pause(w.batch.topic);
      return;
    }
    const first = round[0] as Waiting;
    // Heartbeat while sealing, so that a seal waiting on a lock or a slow Postgres does not get
    // this member fenced out of the group.
    const beat = setInterval(() => void first.batch.heartbeat().catch(() => {}), HEARTBEAT_WHILE_SEALING_MS);
    const started = this.o.now();
    this.o.state.sealStarted();
    let sealed: SealResult;
    const records = round.flatMap((w) => w.records);
    const trace = tracingOn() ? traceSeal(groupId, records) : undefined;
    try {
      sealed = await this.o.ledger.seal(groupId, log.epoch, trace?.records ?? records, log.fence);
      trace?.end();
    } catch (err) {
      trace?.end(err);
      if (!(err instanceof LedgerFenceError)) throw err;
      this.fenced(groupId, round, err);
      return;
    } finally {
      clearInterval(beat);
      this.o.state.sealEnded();
    }
    const last = sealed.blocks.at(-1);
    if (last) this.o.state.advanceFence(groupId, last);
    this.time("seal", started);
    const commits = new Map<LogConsumer, TopicPartitionOffset[]>();
    for (const w of round) {
      const { topic, partition } = w.batch;
      this.o.state.lagged(topic, partition, w.batch.lag());
      const gap = sealed.gaps.find((g) => g.partition === partition);
      if (gap) {
        await this.onGap(w.consumer, topic, gap);
        continue;
      }
      const last = (w.batch.messages.at(-1) as { offset: number }).offset;
      w.batch.resolve(last);
      const list = commits.get(w.consumer) ?? [];
      list.push({ topic, partition, offset: last + 1 });
      commits.set(w.consumer, list);
    }
    // One round deep: this round's batches are done once the previous round is announced, so
    // announcements never pile up behind a slow Kafka.
    const previous = this.tails.get(groupId) ?? Promise.resolve();
    const tail = previous.then(() => this.announce(groupId, log, sealed, commits, started));
    this.tails.set(groupId, tail);
    void tail.then(() => {
      if (this.tails.get(groupId) === tail) this.tails.delete(groupId);
    });
    await previous;
    await first.batch.heartbeat();
  }

  /**
   * Chain records, then receipts (only for recorded blocks; keyed publishes answered without an
   * event of their own with them, since a duplicate may name an event of this round's blocks),
   * then the Kafka offsets (in the background). Never fails: the next round's announcement
   * follows this one.
   */
  private async announce(
    groupId: string,
    log: GroupLog,
    { blocks, answers }: Pick<SealResult, "blocks" | "answers">,
    commits: ReadonlyMap<LogConsumer, TopicPartitionOffset[]>,
    started: number,
  ): Promise<void> {
    try {
      // Chain records before receipts: every block a publisher is told about has its record.
      const recording = this.o.now();
      const recorded = await this.o.chain.record(log.epoch, log.identity, blocks).catch(() => false);
      if (blocks.length > 0) this.time("chain_record", recording);
      for (const block of blocks) {
        this.o.state.blockSealed();
        this.o.logger.debug({ groupId, height: block.height, events: block.events.length }, "block sealed");
        if (recorded) this.o.receipts.announce(block);
      }
      if (recorded && answers.length > 0) this.o.receipts.answer(answers);
      for (const [consumer, positions] of commits) this.committer.note(consumer, positions);
      this.time("round", started);
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err), groupId }, "could not announce sealed blocks (publishers may see TIMEOUT)");
    }
  }

  /**
   * The ledger under the group is not the one this indexer matched (dropped, recreated, restored,
   * replaced): nothing was written. The group is refused at once (one ERROR line, readiness 503
   * with the reason, its partitions paused) and every log is matched to the ledger again, which
   * rebuilds a ledger that lost blocks from the chain records or refuses it for good.
   */
  private fenced(groupId: string, round: readonly Waiting[], err: LedgerFenceError): void {
    const reason = `${err.message}; sealing stopped, matching the ledger again (docs/ledger.md, "Fenced seals")`;
    if (this.o.state.logs.has(groupId)) this.o.logger.error({ groupId, err: errorMessage(err) }, reason);
    this.o.state.refuse(groupId, reason);
    for (const w of round) w.consumer.pause(w.batch.topic);
    this.o.onFence(reason);
  }

  private time(stage: PipelineStage, sinceMs: number): void {
    this.o.timings?.(stage, Math.max(0, this.o.now() - sinceMs) / 1000);
  }

  /**
   * A batch started past the ledger's position. When the log still holds the records in
   * between, fetch them (seek back); when it does not, they are gone for good: refuse the group.
   */
  private async onGap(consumer: LogConsumer, topic: string, gap: OffsetGap): Promise<void> {
    const low = await this.o.logStarts.logStart(topic, gap.partition);
    if (low <= gap.expected) {
      this.o.state.soughtToLedger();
      this.o.logger.info({ ...gap }, "a batch started past the ledger's position; fetching from the ledger's position");
      consumer.seek({ topic, partition: gap.partition, offset: gap.expected });
      return;
    }
    const reason =
      `group ${gap.groupId}: refusing log ${topic}: the log no longer holds records the ledger has not indexed ` +
      `(partition ${gap.partition}: ledger ${gap.expected}, log starts at ${low}); see docs/ledger.md`;
    this.o.logger.error({ ...gap, topic, logStart: low }, reason);
    this.o.state.refuse(gap.groupId, reason);
    consumer.pause(topic);
  }

  /** Waits for the seals, announcements and offset commits under way. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.tails.size > 0) {
      await Promise.all([...this.running.values(), ...this.tails.values()]);
    }
    await this.committer.idle();
  }
}
