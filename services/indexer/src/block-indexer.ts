import type { Consumer, EachBatchPayload, Kafka } from "kafkajs";
import type { Redis } from "ioredis";
import { decodeLogRecord, type Logger, logTopicName } from "@evb/domain";
import type { BlockSealer, PositionedRecord, SealedBlock } from "@evb/storage";
import { announceBlock } from "./receipt-publisher.ts";

export interface BlockIndexerOptions {
  kafka: Kafka;
  sealer: Pick<BlockSealer, "seal">;
  redis: Redis;
  groups: readonly string[];
  topicPrefix: string;
  redisPrefix: string;
  consumerGroup: string;
  maxBatchBytes: number;
  logger: Logger;
  /** Called when consuming stopped and cannot resume in this process. */
  onFatal: (err: Error) => void;
}

/**
 * Consumes the group log topics and turns each fetched batch into a block (rarely several,
 * when an eventId would collide).
 *
 * Order of effects per batch: seal in Postgres (one transaction per block) → start announcing
 * receipts (not awaited: Redis is only a hint) → commit the Kafka offset. A crash between any
 * two steps is safe: before the DB commit nothing
 * happened; after it, a redelivered batch is recognised by `indexed_offsets` and skipped (its
 * receipts are lost, so those publishers see TIMEOUT, but the events are in the ledger).
 */
export class BlockIndexer {
  private readonly consumer: Consumer;
  private readonly opts: BlockIndexerOptions;
  private readonly groupOfTopic = new Map<string, string>();
  private started?: Promise<void>;
  sealedBlocks = 0;

  constructor(opts: BlockIndexerOptions) {
    this.opts = opts;
    for (const g of opts.groups) this.groupOfTopic.set(logTopicName(opts.topicPrefix, g), g);
    this.consumer = opts.kafka.consumer({
      groupId: opts.consumerGroup,
      maxBytesPerPartition: opts.maxBatchBytes,
      maxWaitTimeInMs: 50,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      allowAutoTopicCreation: false,
    });
  }

  start(): Promise<void> {
    this.started ??= (async () => {
      await this.consumer.connect();
      // A broker whose metadata has not caught up with a just-created topic answers "does not
      // host this topic-partition"; that passes within moments, so retry it for a while.
      for (let attempt = 1; ; attempt++) {
        try {
          await this.consumer.subscribe({ topics: [...this.groupOfTopic.keys()], fromBeginning: true });
          break;
        } catch (err) {
          if (attempt >= 50 || !/does not host this topic-partition/i.test(String(err))) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      // kafkajs restarts the consumer after retriable errors; after any other it stops for good
      // while the process lives on. Report that so the service exits and gets restarted
      // instead of idling as a healthy-looking zombie.
      this.consumer.on(this.consumer.events.CRASH, (event) => {
        const { error, restart } = event.payload as { error: Error; restart: boolean };
        if (restart) {
          this.opts.logger.warn({ err: error.message }, "Kafka consumer failed; kafkajs restarts it");
        } else {
          this.opts.onFatal(new Error(`Kafka consumer stopped for good: ${error.message}`, { cause: error }));
        }
      });
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: (payload) => this.onBatch(payload),
      });
    })();
    return this.started;
  }

  private async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (!isRunning() || isStale() || batch.messages.length === 0) return;
    const groupId = this.groupOfTopic.get(batch.topic);
    if (!groupId) return;
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
    const blocks = await this.opts.sealer.seal(groupId, records);
    for (const block of blocks) {
      this.sealedBlocks++;
      this.opts.logger.debug({ groupId, height: block.height, events: block.events.length }, "block sealed");
      this.announce(block);
    }
    const last = batch.messages[batch.messages.length - 1]?.offset as string;
    resolveOffset(last);
    await this.consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: String(Number(last) + 1) }]);
    await heartbeat();
  }

  /**
   * Receipts and the notifiers' nudge, right after the commit and never awaited by the batch:
   * they are hints (the ledger is the truth), so a slow or unreachable Redis must not stall
   * indexing. While Redis is not connected they are dropped rather than queued without bound.
   */
  private announce(block: SealedBlock): void {
    if (this.opts.redis.status !== "ready") {
      this.opts.logger.warn(
        { groupId: block.groupId, height: block.height, redis: this.opts.redis.status },
        "Redis not ready; block not announced (publishers may see TIMEOUT)",
      );
      return;
    }
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out after 2000 ms")), 2000).unref());
    Promise.race([announceBlock(this.opts.redis, this.opts.redisPrefix, block), timeout]).catch((err) =>
      this.opts.logger.warn({ err: String(err) }, "could not announce a block; publishers may see TIMEOUT"),
    );
  }

  async close(): Promise<void> {
    if (this.started) await this.consumer.disconnect();
  }
}
