import { CompressionTypes, Kafka, logLevel as KafkaLogLevel, Partitioners, type Producer } from "kafkajs";
import { classifyKafkaFailure, type Logger, ServiceError, triageKafkaLog } from "@evb/domain";

export interface KafkaLogOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

/** Maps kafkajs's log lines onto our logger (warn and above only; it is chatty). */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: { level: number; log: { message: string } & Record<string, unknown> }) => {
      const kind = triageKafkaLog(log);
      if (kind === "noise") return;
      if (kind === "transient") logger.debug({ kafka: log }, log.message);
      else if (level === KafkaLogLevel.ERROR) logger.error({ kafka: log }, log.message);
      else if (level === KafkaLogLevel.WARN) logger.warn({ kafka: log }, log.message);
    };
}

/** The one place a kafkajs client is made; services get it from their `main.ts`. */
export function createKafka(opts: KafkaLogOptions): Kafka {
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    logLevel: KafkaLogLevel.WARN,
    logCreator: kafkaLogCreator(opts.logger),
    retry: { initialRetryTime: 200, retries: 8 },
  });
}

/** Creates the topics that are missing (the log topics, one per group; the chain topics); existing ones are left alone. */
export async function ensureTopics(
  kafka: Kafka,
  names: string[],
  partitions: number,
  replicationFactor: number,
  configEntries: { name: string; value: string }[] = [],
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = names.filter((n) => !existing.has(n));
    if (missing.length > 0) {
      try {
        // kafkajs's own wait retries only LEADER_NOT_AVAILABLE and gives up on the
        // UNKNOWN_TOPIC_OR_PARTITION a broker answers until its metadata cache has caught up;
        // waitForLeaders below retries both.
        await admin.createTopics({
          waitForLeaders: false,
          topics: missing.map((topic) => ({ topic, numPartitions: partitions, replicationFactor, configEntries })),
        });
      } catch (err) {
        // Another service created them between our list and create: that is what we wanted.
        if (classifyKafkaFailure(err) !== "LOG_TOPIC_EXISTS") throw err;
      }
    }
    await waitForLeaders(admin, names, 30_000);
  } finally {
    await admin.disconnect();
  }
}

/**
 * The controller knows a new topic before every broker's metadata cache does; a consumer that
 * subscribes in between fails with "This server does not host this topic-partition". So wait
 * until a broker's metadata shows a leader for every partition of every topic.
 */
async function waitForLeaders(admin: ReturnType<Kafka["admin"]>, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      if (topics.length === names.length && topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)))
        return;
      last = new Error("some partitions have no leader yet");
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Kafka log topics ${names.join(", ")} have no leaders after ${timeoutMs} ms: ${String(last)}`);
}

interface Pending {
  topic: string;
  key: string;
  value: Buffer;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface EventLogWriterOptions {
  /** Most records in one produce request. Default 500. */
  maxBatch?: number;
  /**
   * Most value bytes in one produce request. Default 512 KiB: well under the brokers' default
   * 1 MiB `message.max.bytes`, which applies per partition batch, so that concurrent large
   * publishes never make Kafka reject a whole batch as MESSAGE_TOO_LARGE.
   */
  maxBatchBytes?: number;
  /** Most appends waiting for Kafka; beyond that `append` fails at once. Default 20000. */
  maxQueued?: number;
  /** Told the number of records of each produce request as it is sent (metrics). */
  onBatch?: (records: number) => void;
}

/** `append` refused because Kafka is not keeping up (or is down) and the queue is full. */
export class LogBackpressureError extends ServiceError {
  constructor(queued: number) {
    super("LOG_BACKPRESSURE", `${queued} publishes are already waiting for Kafka; try again later`);
    this.name = "LogBackpressureError";
  }
}

/**
 * Appends records to the log. Concurrent appends are gathered into one `sendBatch` at a time:
 * one produce request in flight per producer keeps the idempotent producer's sequence numbers
 * sound (kafkajs #1005 loses messages with more concurrent sends than partitions) and turns
 * many small HTTP publishes into few Kafka requests. An append resolves only when every
 * in-sync replica has the record (acks = -1).
 *
 * After a send finally fails, the producer is replaced: kafkajs rolls its idempotent sequence
 * numbers back on failure, and if the brokers did write the failed request, reusing those
 * numbers would have Kafka drop the next records as duplicates while acknowledging them.
 */
export class EventLogWriter {
  private readonly kafka: Kafka;
  private producer: Producer;
  private queue: Pending[] = [];
  private flushing = false;
  private started?: Promise<void>;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly maxQueued: number;
  private readonly onBatch: (records: number) => void;
  private sending = 0;

  constructor(kafka: Kafka, opts: EventLogWriterOptions = {}) {
    this.kafka = kafka;
    this.producer = this.newProducer();
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxBatchBytes = opts.maxBatchBytes ?? 512 * 1024;
    this.maxQueued = opts.maxQueued ?? 20_000;
    this.onBatch = opts.onBatch ?? (() => {});
  }

  private newProducer(): Producer {
    // The default (murmur2, Java-compatible) partitioner: one topic name always maps to one partition.
    return this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  start(): Promise<void> {
    this.started ??= this.producer.connect();
    return this.started;
  }

  append(topic: string, key: string, value: Buffer): Promise<void> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(new LogBackpressureError(this.queue.length));
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, key, value, resolve, reject });
      void this.flush();
    });
  }

  /** The next produce request: up to maxBatch records and maxBatchBytes, at least one record. */
  private takeBatch(): Pending[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < this.maxBatch) {
      const size = (this.queue[n] as Pending).value.length + (this.queue[n] as Pending).key.length;
      if (n > 0 && bytes + size > this.maxBatchBytes) break;
      bytes += size;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        await this.start();
        const batch = this.takeBatch();
        const byTopic = new Map<string, { key: string; value: Buffer }[]>();
        for (const p of batch) {
          const list = byTopic.get(p.topic) ?? [];
          list.push({ key: p.key, value: p.value });
          byTopic.set(p.topic, list);
        }
        this.onBatch(batch.length);
        this.sending = batch.length;
        try {
          await this.producer.sendBatch({
            acks: -1,
            compression: CompressionTypes.None,
            topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
          });
          for (const p of batch) p.resolve();
        } catch (err) {
          for (const p of batch) p.reject(err);
          await this.replaceProducer();
        } finally {
          this.sending = 0;
        }
      }
    } catch (err) {
      // connect() failed: fail what waits; the next append tries a fresh producer.
      for (const p of this.queue.splice(0)) p.reject(err);
      await this.replaceProducer();
    } finally {
      this.flushing = false;
    }
  }

  private async replaceProducer(): Promise<void> {
    const old = this.producer;
    this.producer = this.newProducer();
    this.started = undefined;
    await old.disconnect().catch(() => {});
  }

  /** Publishes waiting for Kafka. */
  get queued(): number {
    return this.queue.length;
  }

  /** Publishes waiting for Kafka, the produce request in flight included. */
  get waiting(): number {
    return this.queue.length + this.sending;
  }

  /** The most publishes that may queue before `append` fails at once. */
  get cap(): number {
    return this.maxQueued;
  }

  async close(): Promise<void> {
    if (this.started) await this.producer.disconnect();
    this.started = undefined;
  }
}
