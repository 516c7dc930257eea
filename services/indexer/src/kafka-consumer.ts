import type { Consumer, Kafka } from "kafkajs";
import type { ConsumerSettings, LogConsumer, LogConsumers } from "./ports.ts";

/** The `LogConsumers` port over kafkajs: offsets as numbers, the events the indexer needs, no auto-commit. */
export function kafkaConsumers(kafka: Kafka): LogConsumers {
  return { create: (settings) => new KafkaLogConsumer(kafka, settings) };
}

class KafkaLogConsumer implements LogConsumer {
  private readonly consumer: Consumer;
  private readonly settings: ConsumerSettings;

  constructor(kafka: Kafka, settings: ConsumerSettings) {
    this.settings = settings;
    this.consumer = kafka.consumer({
      groupId: settings.groupId,
      maxBytesPerPartition: settings.maxBytesPerPartition,
      maxWaitTimeInMs: settings.maxWaitTimeInMs,
      sessionTimeout: settings.sessionTimeout,
      rebalanceTimeout: settings.rebalanceTimeout,
      heartbeatInterval: settings.heartbeatInterval,
      allowAutoTopicCreation: false,
    });
  }

  connect(): Promise<void> {
    return this.consumer.connect();
  }

  subscribe(topics: readonly string[]): Promise<void> {
    return this.consumer.subscribe({ topics: [...topics], fromBeginning: true });
  }

  run(onBatch: Parameters<LogConsumer["run"]>[0]): Promise<void> {
    return this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.settings.partitionsConsumedConcurrently,
      eachBatch: ({ batch, resolveOffset, heartbeat, isRunning, isStale }) =>
        onBatch({
          topic: batch.topic,
          partition: batch.partition,
          messages: batch.messages.map((m) => ({ offset: Number(m.offset), value: m.value, timestampMs: Number(m.timestamp) })),
          lag: () => Number(batch.offsetLag()),
          heartbeat,
          resolve: (offset) => resolveOffset(String(offset)),
          current: () => isRunning() && !isStale(),
        }),
    });
  }

  onCrash(listener: (error: Error, restart: boolean) => void): void {
    this.consumer.on(this.consumer.events.CRASH, (event) => {
      const { error, restart } = event.payload as { error: Error; restart: boolean };
      listener(error, restart);
    });
  }

  onAssign(listener: (assigned: Record<string, number[]>) => void): void {
    this.consumer.on(this.consumer.events.GROUP_JOIN, (event) => {
      listener((event.payload as { memberAssignment: Record<string, number[]> }).memberAssignment);
    });
  }

  seek(p: { topic: string; partition: number; offset: number }): void {
    this.consumer.seek({ topic: p.topic, partition: p.partition, offset: String(p.offset) });
  }

  pause(topic: string): void {
    this.consumer.pause([{ topic }]);
  }

  commit(positions: readonly { topic: string; partition: number; offset: number }[]): Promise<void> {
    return this.consumer.commitOffsets(positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })));
  }

  disconnect(): Promise<void> {
    return this.consumer.disconnect();
  }
}
