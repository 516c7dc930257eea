import { CompressionTypes, Kafka, logLevel as KafkaLogLevel, Partitioners, type Producer } from "kafkajs";
import type { Logger } from "@evb/domain";

export interface KafkaLogOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

/**
 * Broker answers that kafkajs retries by itself and that every fresh broker or leader change
 * gives for a moment (coordinator loading, leader election, metadata catching up). kafkajs logs
 * each at ERROR before retrying; they are debug here, since a failure that outlasts the retries
 * surfaces where the call fails (a rejected send, a crashed consumer) with its own message.
 */
const TRANSIENT_BROKER_ERRORS = new Set([
  "The coordinator is loading and hence can't process requests for this group",
  "The group coordinator is not available",
  "This is not the correct coordinator for this group",
  "This server does not host this topic-partition",
  "There is no leader for this topic-partition as we are in the middle of a leadership election",
  "This server is not the leader for that topic-partition",
  "The server disconnected before a response was received",
  "The group is rebalancing, so a rejoin is needed",
  // A member fenced out of its group (a long pause) hears this, and kafkajs re-joins.
  "The coordinator is not aware of this member",
]);

/**
 * A kafkajs log line about a transient condition it handles itself: a broker's transient
 * answer, a consumer crash caused by one (kafkajs restarts the consumer; the indexer logs that
 * at warn), and the restart notice.
 */
function isTransient(log: { message: string } & Record<string, unknown>): boolean {
  if (typeof log.error === "string" && TRANSIENT_BROKER_ERRORS.has(log.error)) return true;
  if (log.message.startsWith("Restarting the consumer in ")) return true;
  if (log.message.endsWith("re-joining the group")) return true;
  if (log.message.startsWith("Crash: ")) for (const e of TRANSIENT_BROKER_ERRORS) if (log.message.endsWith(e)) return true;
  return false;
}

/** Maps kafkajs's log lines onto our logger (warn and above only; it is chatty). */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: { level: number; log: { message: string } & Record<string, unknown> }) => {
      // Noise kafkajs prints on every start; our producer settings are deliberate.
      if (/Limiting retries for the idempotent producer/.test(log.message)) return;
      if (isTransient(log)) logger.debug({ kafka: log }, log.message);
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
        if (!/already exists/i.test(String((err as Error).message))) throw err;
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
export class LogBackpressureError extends Error {
  constructor(queued: number) {
    super(`${queued} publishes are already waiting for Kafka; try again later`);
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
