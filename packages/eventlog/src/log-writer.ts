import { murmur2 } from "@platformatic/kafka";
import { errorMessage, type Logger, ServiceError } from "@evb/domain";

/** A log writer: the gateway's publishes, the chain and subscriptions records. */
export interface LogWriter {
  /**
   * Resolves once every in-sync replica has the record; LogBackpressureError at once when the
   * queue is full. `headers` go with the record (a publish's `traceparent` when tracing is on).
   */
  append(topic: string, key: string, value: Buffer, headers?: RecordHeaders): Promise<void>;
  /** Appends waiting for Kafka. */
  readonly queued: number;
  /** Appends waiting for Kafka, the produce requests in flight included. */
  readonly waiting: number;
  /** The most appends that may queue before `append` fails at once. */
  readonly cap: number;
  /** Connects every lane's producer; fails when Kafka cannot be reached. */
  start(): Promise<void>;
  /** Sends what waits, then closes the producers. */
  close(): Promise<void>;
}

/** A record's Kafka headers: name bytes to value bytes (the client's own form). */
export type RecordHeaders = Map<Buffer, Buffer>;

/** One record of a produce request. */
export interface ProducedRecord {
  topic: string;
  key: Buffer;
  value: Buffer;
  headers?: RecordHeaders | undefined;
}

/**
 * What the writer core needs of a Kafka client's producer (one adapter per client, e.g.
 * `platformaticProducer`): an idempotent producer with `acks = all`, no topic auto-creation and
 * Java-compatible murmur2 partitioning of the key.
 */
export interface ProducerAdapter {
  /** Connects and gets the producer id; called once per producer, before its first send. */
  start(): Promise<void>;
  /** One produce request of these records; rejects with the client's own error (read by `classifyKafkaFailure`). */
  send(records: readonly ProducedRecord[]): Promise<void>;
  /** Closes at once. */
  close(): Promise<void>;
}

/** Makes a fresh producer; `generation` numbers the producers one writer made (for client ids). */
export type ProducerFactory = (generation: number) => ProducerAdapter;

export interface LogWriterOptions {
  /** Most records in one produce request. Default 500. */
  maxBatch?: number;
  /**
   * Most key and value bytes in one produce request. Default 512 KiB: well under the brokers'
   * default 1 MiB `message.max.bytes`, which applies per partition batch, so that concurrent
   * large publishes never make Kafka reject a whole batch as MESSAGE_TOO_LARGE.
   */
  maxBatchBytes?: number;
  /** Most appends waiting for Kafka; beyond that `append` fails at once. Default 20000. */
  maxQueued?: number;
  /** Told the number of records of each produce request as it is sent (metrics). */
  onBatch?: (records: number) => void;
  /**
   * Producers sending side by side, each with one produce request in flight. A record goes to
   * the lane its key hashes to, so one key's records stay in append order. Default 1: on the
   * whole pipeline 4 lanes measured no faster, only more requests (docs/performance.md).
   */
  lanes?: number;
  /** Told each failed produce request (the client logs nothing itself). */
  logger?: Logger;
}

/** `append` refused because Kafka is not keeping up (or is down) and the queue is full. */
export class LogBackpressureError extends ServiceError {
  constructor(queued: number) {
    super("LOG_BACKPRESSURE", `${queued} publishes are already waiting for Kafka; try again later`);
    this.name = "LogBackpressureError";
  }
}

/** A failed send: the client's error stays the `cause`, where `classifyKafkaFailure` reads its fields. */
export class LogSendError extends Error {
  constructor(cause: unknown) {
    super(`Kafka send failed: ${errorText(cause)}`, { cause });
    this.name = "LogSendError";
  }
}

/** A client error's message with its innermost attempt's, for the log line. */
function errorText(err: unknown, depth = 0): string {
  if (!err || typeof err !== "object" || depth > 8) return String(err);
  const e = err as { message?: string; errors?: unknown[] };
  const inner = (e.errors ?? []).slice(-1).map((x) => errorText(x, depth + 1));
  return [e.message ?? String(err), ...inner].join(" ← ");
}

interface Pending extends ProducedRecord {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The lane of a key: the same hash the partitioner uses, so lanes split partitions evenly. */
export function laneOf(key: Buffer, lanes: number): number {
  return (murmur2(key) & 0x7fffffff) % lanes;
}

/**
 * One producer and its queue: what waits is gathered into one produce request at a time. With a
 * single send in flight per producer, an idempotent producer's sequence numbers are assigned in
 * the order the broker sees them, and nothing waits on a metadata refresh while another send
 * fails and resets them.
 */
class Lane {
  queue: Pending[] = [];
  sending = 0;
  private producer: ProducerAdapter;
  private started?: Promise<void>;
  private running = false;
  private flushing: Promise<void> = Promise.resolve();
  private readonly writer: LogWriterCore;

  constructor(writer: LogWriterCore) {
    this.writer = writer;
    this.producer = writer.newProducer();
  }

  start(): Promise<void> {
    this.started ??= this.producer.start();
    return this.started;
  }

  flush(): void {
    if (this.running) return;
    this.running = true;
    this.flushing = this.run();
  }

  private async run(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.sendNext();
    } finally {
      // In the same turn as the last look at the queue: an append after it starts a new run.
      this.running = false;
    }
  }

  /** Sends the next batch of the queue (or fails what waits when there is no producer id). */
  private async sendNext(): Promise<void> {
    try {
      await this.start();
    } catch (err) {
      // No producer id: fail what waits; the next append tries a fresh producer.
      const failure = new LogSendError(err);
      this.writer.logger?.warn({ err: errorMessage(failure), records: this.queue.length }, "could not start a Kafka producer");
      for (const p of this.queue.splice(0)) p.reject(failure);
      await this.replaceProducer();
      return;
    }
    const batch = this.writer.takeBatch(this.queue);
    this.writer.onBatch(batch.length);
    this.sending = batch.length;
    try {
      await this.producer.send(batch);
      for (const p of batch) p.resolve();
    } catch (err) {
      const failure = new LogSendError(err);
      this.writer.logger?.warn(
        { err: errorMessage(failure), records: batch.length },
        "a Kafka produce request failed; its producer is replaced",
      );
      for (const p of batch) p.reject(failure);
      await this.replaceProducer();
    } finally {
      this.sending = 0;
    }
  }

  /**
   * After a failed send the producer is not used again: the brokers may have written the failed
   * request, and a later send under the same producer id must never reuse its sequence numbers
   * (the client rolls them back on failure, and the brokers would then drop the next records as
   * duplicates while acknowledging them).
   */
  private async replaceProducer(): Promise<void> {
    const old = this.producer;
    this.producer = this.writer.newProducer();
    this.started = undefined;
    await old.close().catch(() => {});
  }

  async close(): Promise<void> {
    await this.flushing;
    this.started = undefined;
    await this.producer.close().catch(() => {});
  }
}

/**
 * The one writer core, whatever the client: appends gathered into one produce request at a time
 * per lane (at most `maxBatch` records and `maxBatchBytes`), backpressure (past `maxQueued`
 * waiting, `append` fails at once with LogBackpressureError), and a producer replaced after every
 * failed send. An append resolves once every in-sync replica has the record.
 *
 * Why lanes and not several requests on one producer: a client that keeps several idempotent
 * requests in flight on one producer can reuse sequence numbers after a failure (kafkajs #1005
 * lost acknowledged records that way); a lane is a producer of its own with one request in flight.
 */
export class LogWriterCore implements LogWriter {
  private readonly lanes: Lane[] = [];
  private readonly factory: ProducerFactory;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly maxQueued: number;
  private generation = 0;
  readonly onBatch: (records: number) => void;
  readonly logger: Logger | undefined;

  constructor(factory: ProducerFactory, opts: LogWriterOptions = {}) {
    this.factory = factory;
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxBatchBytes = opts.maxBatchBytes ?? 512 * 1024;
    this.maxQueued = opts.maxQueued ?? 20_000;
    this.onBatch = opts.onBatch ?? (() => {});
    this.logger = opts.logger;
    for (let i = 0; i < Math.max(1, opts.lanes ?? 1); i++) this.lanes.push(new Lane(this));
  }

  /** @internal A fresh producer for a lane. */
  newProducer(): ProducerAdapter {
    return this.factory(this.generation++);
  }

  async start(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.start()));
  }

  append(topic: string, key: string, value: Buffer, headers?: RecordHeaders): Promise<void> {
    const queued = this.queued;
    if (queued >= this.maxQueued) return Promise.reject(new LogBackpressureError(queued));
    const keyBytes = Buffer.from(key);
    const lane = this.lanes[laneOf(keyBytes, this.lanes.length)] as Lane;
    return new Promise((resolve, reject) => {
      lane.queue.push({ topic, key: keyBytes, value, headers, resolve, reject });
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

  get queued(): number {
    let n = 0;
    for (const l of this.lanes) n += l.queue.length;
    return n;
  }

  get waiting(): number {
    let n = 0;
    for (const l of this.lanes) n += l.queue.length + l.sending;
    return n;
  }

  get cap(): number {
    return this.maxQueued;
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.close()));
  }
}
