import { Admin as PlatformaticAdmin } from "@platformatic/kafka";
import type { Admin, Kafka } from "kafkajs";
import type { LogIdentity } from "@evb/domain";

/** First offset held and next offset to be written, per partition. */
export interface PartitionOffsets {
  partition: number;
  low: number;
  high: number;
}

/**
 * What Kafka says about a log topic, for the indexer's log-identity decision: the cluster id
 * and topic id (kafkajs does not read topic ids; @platformatic/kafka's metadata does), each
 * partition's start and end offsets, and a consumer group's committed offsets.
 */
export class LogInspector {
  private readonly admin: Admin;
  private readonly brokers: string[];
  private connected?: Promise<void>;

  constructor(opts: { kafka: Kafka; brokers: string[] }) {
    this.admin = opts.kafka.admin();
    this.brokers = opts.brokers;
  }

  private connect(): Promise<void> {
    this.connected ??= this.admin.connect().catch((err) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  async identity(topic: string): Promise<LogIdentity> {
    const client = new PlatformaticAdmin({ clientId: "evb-log-inspector", bootstrapBrokers: this.brokers, retries: 5 });
    try {
      const md = await client.metadata({ topics: [topic], autocreateTopics: false, forceUpdate: true });
      const id = md.topics.get(topic)?.id;
      if (!id) throw new Error(`Kafka reports no topic id for ${topic}`);
      return { clusterId: md.id, topicId: id };
    } finally {
      await client.close();
    }
  }

  async offsets(topic: string): Promise<PartitionOffsets[]> {
    await this.connect();
    const rows = await whileRetriable(() => this.admin.fetchTopicOffsets(topic));
    return rows
      .map((r) => ({ partition: r.partition, low: Number(r.low), high: Number(r.high) }))
      .sort((a, b) => a.partition - b.partition);
  }

  /** Committed offset per partition; a partition without one is absent. */
  async committed(topic: string, groupId: string): Promise<Map<number, number>> {
    await this.connect();
    // A fresh cluster answers "coordinator loading" until its offsets topic exists.
    const [row] = await whileRetriable(() => this.admin.fetchOffsets({ groupId, topics: [topic] }));
    const out = new Map<number, number>();
    for (const p of row?.partitions ?? []) if (Number(p.offset) >= 0) out.set(p.partition, Number(p.offset));
    return out;
  }

  async close(): Promise<void> {
    if (this.connected) await this.admin.disconnect().catch(() => {});
    this.connected = undefined;
  }
}

/** Runs `fn` again while it fails with an answer Kafka marks retriable, for up to `timeoutMs`. */
async function whileRetriable<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isRetriable(err) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** kafkajs marks a retriable broker answer on the error or, once its own retries ran out, on its cause. */
function isRetriable(err: unknown): boolean {
  for (let e = err as { retriable?: unknown; cause?: unknown; name?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.retriable === true || e.name === "KafkaJSNumberOfRetriesExceeded") return true;
  }
  return false;
}
