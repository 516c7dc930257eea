import {
  type ChainRecord,
  chainRecordKey,
  chainTopicName,
  encodeChainRecord,
  encodeTopicRecord,
  subscriptionsTopicName,
  type TopicRecord,
  topicRecordKey,
} from "@evb/domain";
import { ensureTopics } from "./kafka-admin.ts";
import type { KafkaClient } from "./kafka-client.ts";
import type { LogWriterCore } from "./log-writer.ts";
import { createLogWriter } from "./platformatic-producer.ts";

/**
 * Writes chain records to the groups' chain topics: compacted, one partition, keyed by height
 * and hash (`chainRecordKey`: compaction keeps every different record of a height) (and topic
 * records, keyed by `topic:<name>`; and the subscriptions topics' records), with every in-sync
 * replica's acknowledgement. It is the writer core with one lane: writes go out in the order
 * they were made, one produce request at a time, and a failed write replaces the producer; it is
 * the caller's to retry (the ledger remembers which blocks still lack their record).
 */
export class ChainLogWriter {
  private readonly kafka: KafkaClient;
  private readonly writer: LogWriterCore;

  constructor(kafka: KafkaClient) {
    this.kafka = kafka;
    this.writer = createLogWriter(kafka, { name: "chain" });
  }

  /** Creates the chain topics that are missing: compacted, one partition. */
  ensureTopics(names: readonly string[], replicationFactor: number): Promise<void> {
    return ensureTopics(this.kafka, [...names], 1, replicationFactor, [{ name: "cleanup.policy", value: "compact" }]);
  }

  write(topic: string, records: readonly ChainRecord[]): Promise<void> {
    return this.writeMessages(
      topic,
      records.map((r) => ({ key: chainRecordKey(r), value: encodeChainRecord(r) })),
    );
  }

  /** Writes a topic row as `rest/open` acknowledged it (a rebuilt ledger restores it). */
  writeTopic(topic: string, record: TopicRecord): Promise<void> {
    return this.writeMessages(topic, [{ key: topicRecordKey(record.name), value: encodeTopicRecord(record) }]);
  }

  /** Writes keyed messages to a compacted topic of this writer's kind (the subscriptions topics), in order. */
  async writeMessages(topic: string, messages: { key: string; value: Buffer }[]): Promise<void> {
    await Promise.all(messages.map((m) => this.writer.append(topic, m.key, m.value)));
  }

  /**
   * Creates the groups' chain and subscriptions topics that are missing. A subscriptions topic
   * takes a checkpoint of every delivering subscription every few seconds: its segments roll every
   * 10 minutes so that compaction keeps what a rebuild reads to one record per key and about 10
   * minutes of checkpoints.
   */
  async ensureGroupTopics(prefix: string, groups: readonly string[], replicationFactor: number): Promise<void> {
    await this.ensureTopics(
      groups.map((g) => chainTopicName(prefix, g)),
      replicationFactor,
    );
    await ensureTopics(
      this.kafka,
      groups.map((g) => subscriptionsTopicName(prefix, g)),
      1,
      replicationFactor,
      [
        { name: "cleanup.policy", value: "compact" },
        { name: "segment.ms", value: String(10 * 60_000) },
        { name: "min.cleanable.dirty.ratio", value: "0.1" },
      ],
    );
  }

  /** Sends what waits, then closes the producer. */
  close(): Promise<void> {
    return this.writer.close();
  }
}
