import { compatibilityPartitioner, murmur2, ProduceAcks, Producer } from "@platformatic/kafka";
import { type EventLogWriterOptions, LogBackpressureError } from "./kafka-log.ts";

interface Pending {
  topic: string;
  key: Buffer;
  value: Buffer;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface PlatformaticLogWriterOptions extends EventLogWriterOptions {
  brokers: string[];
  clientId: string;
  /**
   * Producers sending side by side, each with one produce request in flight. A record goes to
   * the lane its key hashes to, so one key's records stay in append order. Default 1: on the
   * whole pipeline 4 lanes measured no faster, only more requests (docs/performance.md).
   */
  lanes?: number;
  /** Makes a lane's producer (tests inject failing ones). Default: an idempotent @platformatic/kafka producer. */
  createProducer?: (clientId: string, brokers: string[]) => LaneProducer;
}

/** What a lane needs of a producer. */
export interface LaneProducer {
  initIdempotentProducer(options: Record<string, never>): Promise<unknown>;
  send(options: { messages: { topic: string; key: Buffer; value: Buffer }[] }): Promise<unknown>;
  close(force?: boolean): Promise<void>;
}

/** Kafka's answers after which the brokers certainly did not write the record (as in classifyKafkaFailure). */
const REFUSALS = [
  "MESSAGE_TOO_LARGE",
  "RECORD_LIST_TOO_LARGE",
  "INVALID_RECORD",
  "CORRUPT_MESSAGE",
  "UNKNOWN_TOPIC_OR_PARTITION",
  "TOPIC_AUTHORIZATION_FAILED",
  "CLUSTER_AUTHORIZATION_FAILED",
];

/** A failed send, named the way the domain's Kafka classifier reads kafkajs's errors (`type`). */
export class LogSendError extends Error {
  readonly type: string;
  constructor(cause: unknown) {
    const type = refusalIn(cause) ?? "";
    super(`Kafka send failed${type ? ` (${type})` : ""}: ${errorText(cause)}`, { cause });
    this.name = "LogSendError";
    this.type = type;
  }
}

/** The first broker refusal named anywhere in a @platformatic/kafka error tree. */
function refusalIn(err: unknown, depth = 0): string | undefined {
  if (!err || typeof err !== "object" || depth > 8) return undefined;
  const e = err as { apiId?: unknown; errors?: unknown[]; cause?: unknown };
  if (typeof e.apiId === "string" && REFUSALS.some((r) => (e.apiId as string).includes(r))) return e.apiId;
  for (const inner of e.errors ?? []) {
    const found = refusalIn(inner, depth + 1);
    if (found) return found;
  }
  return refusalIn(e.cause, depth + 1);
}

function errorText(err: unknown, depth = 0): string {
  if (!err || typeof err !== "object" || depth > 8) return String(err);
  const e = err as { message?: string; errors?: unknown[] };
  const inner = (e.errors ?? []).slice(-1).map((x) => errorText(x, depth + 1));
  return [e.message ?? String(err), ...inner].join(" ← ");
}

/** Kafka retries: 8 more tries, 200 ms doubling to 5 s between them (about 21 s in all), as kafkajs is set up in createKafka. */
const RETRIES = 8;
function retryDelay(_client: unknown, _op: string, attempt: number): number {
  return Math.min(200 * 2 ** Math.max(0, attempt - 1), 5_000);
}

/** A lane's producer: idempotent, acks = all, no topic auto-creation, Java-compatible partitioning. */
export function platformaticProducer(clientId: string, brokers: string[]): LaneProducer {
  return new Producer({
    clientId,
    bootstrapBrokers: brokers,
    idempotent: true,
    acks: ProduceAcks.ALL,
    autocreateTopics: false,
    // murmur2 masked to 31 bits modulo the partition count: kafkajs's DefaultPartitioner and
    // Java's, so a topic name lands in the same partition whichever client wrote it.
    partitioner: compatibilityPartitioner,
    retries: RETRIES,
    retryDelay,
    timeout: 30_000,
  });
}

/** The lane of a key: the same hash the partitioner uses, so lanes split partitions evenly. */
export function laneOf(key: Buffer, lanes: number): number {
  return (murmur2(key) & 0x7fffffff) % lanes;
}

/**
 * One producer and its queue. Like kafkajs's writer, it gathers what waits into one produce
 * request at a time: with a single send in flight per producer, an idempotent producer's
 * sequence numbers are assigned in the order the broker sees them, and nothing waits on a
 * metadata refresh while another send fails and resets them.
 */
class Lane {
  producer: LaneProducer;
  queue: Pending[] = [];
  sending = 0;
  private flushing = false;
  private started?: Promise<unknown>;
  private generation = 0;
  private readonly writer: PlatformaticLogWriter;

  constructor(writer: PlatformaticLogWriter) {
    this.writer = writer;
    this.producer = writer.newProducer(0);
  }

  start(): Promise<unknown> {
    this.started ??= this.producer.initIdempotentProducer({});
    return this.started;
  }

  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    void this.run();
  }

  private async run(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        try {
          await this.start();
        } catch (err) {
          // No producer id: fail what waits; the next append tries a fresh producer.
          for (const p of this.queue.splice(0)) p.reject(new LogSendError(err));
          await this.replaceProducer();
          continue;
        }
        const batch = this.writer.takeBatch(this.queue);
        this.writer.onBatch(batch.length);
        this.sending = batch.length;
        try {
          await this.producer.send({ messages: batch.map((p) => ({ topic: p.topic, key: p.key, value: p.value })) });
          for (const p of batch) p.resolve();
        } catch (err) {
          const failure = new LogSendError(err);
          for (const p of batch) p.reject(failure);
          await this.replaceProducer();
        } finally {
          this.sending = 0;
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * After a failed send the producer is not used again: the brokers may have written the failed
   * request, and a later send under the same producer id must never reuse its sequence numbers.
   */
  private async replaceProducer(): Promise<void> {
    const old = this.producer;
    this.producer = this.writer.newProducer(++this.generation);
    this.started = undefined;
    await old.close(true).catch(() => {});
  }

  async close(): Promise<void> {
    this.started = undefined;
    await this.producer.close(true).catch(() => {});
  }
}

/**
 * The gateway's log writer on @platformatic/kafka (`KAFKA_CLIENT=platformatic`): the same
 * contract as `EventLogWriter` (append resolves once every in-sync replica has the record;
 * produce requests capped at 500 records and 512 KiB; at most 20,000 appends waiting, beyond
 * which `append` fails at once with LogBackpressureError; a producer replaced after a failed send).
 * With `lanes` > 1 it keeps several produce requests in flight: each lane is an idempotent
 * producer of its own (its own producer id and connection) with one request in flight, and a key
 * always uses the same lane, so per-key order holds while different topics' records travel side
 * by side.
 *
 * Why lanes and not several requests on one producer: @platformatic/kafka forces one request in
 * flight per connection for an idempotent producer, and after a failed send it clears its
 * sequence numbers while another send on the same producer may still be waiting for metadata
 * under the old producer id, which could repeat sequence numbers the broker has seen.
 */
export class PlatformaticLogWriter {
  private readonly lanes: Lane[];
  private readonly brokers: string[];
  private readonly clientId: string;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly maxQueued: number;
  private readonly makeProducer: (clientId: string, brokers: string[]) => LaneProducer;
  readonly onBatch: (records: number) => void;

  constructor(opts: PlatformaticLogWriterOptions) {
    this.brokers = opts.brokers;
    this.clientId = opts.clientId;
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxBatchBytes = opts.maxBatchBytes ?? 512 * 1024;
    this.maxQueued = opts.maxQueued ?? 20_000;
    this.onBatch = opts.onBatch ?? (() => {});
    this.makeProducer = opts.createProducer ?? platformaticProducer;
    this.lanes = [];
    for (let i = 0; i < Math.max(1, opts.lanes ?? 1); i++) this.lanes.push(new Lane(this));
  }

  /** @internal A fresh producer for a lane. */
  newProducer(generation: number): LaneProducer {
    return this.makeProducer(`${this.clientId}-${generation}`, this.brokers);
  }

  /** Connects every lane's producer and gets its producer id; fails when Kafka cannot be reached. */
  async start(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.start()));
  }

  append(topic: string, key: string, value: Buffer): Promise<void> {
    const queued = this.queued;
    if (queued >= this.maxQueued) return Promise.reject(new LogBackpressureError(queued));
    const keyBytes = Buffer.from(key);
    const lane = this.lanes[laneOf(keyBytes, this.lanes.length)] as Lane;
    return new Promise((resolve, reject) => {
      lane.queue.push({ topic, key: keyBytes, value, resolve, reject });
      lane.flush();
    });
  }

  /** @internal The next produce request of a lane: up to maxBatch records and maxBatchBytes, at least one. */
  takeBatch(queue: Pending[]): Pending[] {
    let bytes = 0;
    let n = 0;
    while (n < queue.length && n < this.maxBatch) {
      const p = queue[n] as Pending;
      const size = p.value.length + p.key.length;
      if (n > 0 && bytes + size > this.maxBatchBytes) break;
      bytes += size;
      n++;
    }
    return queue.splice(0, n);
  }

  /** Publishes waiting for Kafka. */
  get queued(): number {
    let n = 0;
    for (const l of this.lanes) n += l.queue.length;
    return n;
  }

  /** Publishes waiting for Kafka, the produce requests in flight included. */
  get waiting(): number {
    let n = 0;
    for (const l of this.lanes) n += l.queue.length + l.sending;
    return n;
  }

  /** The most publishes that may queue before `append` fails at once. */
  get cap(): number {
    return this.maxQueued;
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.close()));
  }
}
