import type { Kafka, Producer } from "kafkajs";
import { type ChainRecord, encodeChainRecord } from "@evb/domain";
import { ensureTopics, idempotentProducer } from "./kafka-log.ts";

/**
 * Writes chain records to the groups' chain topics: compacted, one partition, keyed by height,
 * with every in-sync replica's acknowledgement. Writes go one at a time (one produce request in
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
    const run = this.tail.then(() => this.send(topic, records));
    this.tail = run.catch(() => {});
    return run;
  }

  private async send(topic: string, records: readonly ChainRecord[]): Promise<void> {
    if (records.length === 0) return;
    try {
      this.connected ??= this.producer.connect();
      await this.connected;
      await this.producer.send({ topic, acks: -1, messages: records.map((r) => ({ key: String(r.height), value: encodeChainRecord(r) })) });
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
