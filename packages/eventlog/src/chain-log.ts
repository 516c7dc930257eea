import type { Kafka, Producer } from "kafkajs";
import { type ChainRecord, chainRecordKey, encodeChainRecord, encodeTopicRecord, type TopicRecord, topicRecordKey } from "@evb/domain";
import { ensureTopics, idempotentProducer } from "./kafka-log.ts";

/**
 * Writes chain records to the groups' chain topics: compacted, one partition, keyed by height
 * and hash (`chainRecordKey`: compaction keeps every different record of a height) (and topic
 * records, keyed by `topic:<name>`), with every in-sync replica's acknowledgement. Writes go one at a time (one produce request in
 * flight keeps the idempotent producer's sequence numbers sound); a failed write replaces the
 * producer, as EventLogWriter does, and is the caller's to retry (the ledger remembers which
 * blocks still lack their record).
 */
export class ChainLogWriter {
  private readonly kafka: Kafka;
  private producer: Producer;
  private connected?: Promise<void>;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(kafka: Kafka) {
    this.kafka = kafka;
    this.producer = idempotentProducer(this.kafka);
  }

  /** Creates the chain topics that are missing: compacted, one partition. */
  ensureTopics(names: readonly string[], replicationFactor: number): Promise<void> {
    return ensureTopics(this.kafka, [...names], 1, replicationFactor, [{ name: "cleanup.policy", value: "compact" }]);
  }

  write(topic: string, records: readonly ChainRecord[]): Promise<void> {
    return this.enqueue(
      topic,
      records.map((r) => ({ key: chainRecordKey(r), value: encodeChainRecord(r) })),
    );
  }

  /** Writes a topic row as `rest/open` acknowledged it (a rebuilt ledger restores it). */
  writeTopic(topic: string, record: TopicRecord): Promise<void> {
    return this.enqueue(topic, [{ key: topicRecordKey(record.name), value: encodeTopicRecord(record) }]);
  }

  private enqueue(topic: string, messages: { key: string; value: Buffer }[]): Promise<void> {
    const run = this.tail.then(() => this.send(topic, messages));
    this.tail = run.catch(() => {});
    return run;
  }

  private async send(topic: string, messages: { key: string; value: Buffer }[]): Promise<void> {
    if (messages.length === 0) return;
    try {
      this.connected ??= this.producer.connect();
      await this.connected;
      await this.producer.send({ topic, acks: -1, messages });
    } catch (err) {
      const old = this.producer;
      this.producer = idempotentProducer(this.kafka);
      this.connected = undefined;
      await old.disconnect().catch(() => {});
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.tail;
    if (this.connected) await this.producer.disconnect().catch(() => {});
    this.connected = undefined;
  }
}
