import type { Admin } from "@platformatic/kafka";
import type { LogIdentity } from "@evb/domain";
import { committedOffsets, type PartitionOffsets, topicOffsets, whileRetriable } from "./kafka-admin.ts";
import type { KafkaClient } from "./kafka-client.ts";

/**
 * What Kafka says about a log topic, for the indexer's log-identity decision and its metrics:
 * the cluster id and topic id (from the metadata), each partition's start and end offsets, and
 * a consumer group's committed offsets. One admin client, made on first use.
 */
export class LogInspector {
  private readonly kafka: KafkaClient;
  private client?: Admin;

  constructor(opts: { kafka: KafkaClient }) {
    this.kafka = opts.kafka;
  }

  private get admin(): Admin {
    this.client ??= this.kafka.admin("inspector");
    return this.client;
  }

  async identity(topic: string): Promise<LogIdentity> {
    const md = await whileRetriable(() => this.admin.metadata({ topics: [topic], forceUpdate: true }));
    const id = md.topics.get(topic)?.id;
    if (!id) throw new Error(`Kafka reports no topic id for ${topic}`);
    return { clusterId: md.id, topicId: id };
  }

  offsets(topic: string): Promise<PartitionOffsets[]> {
    return whileRetriable(() => topicOffsets(this.admin, topic));
  }

  /** Committed offset per partition; a partition without one is absent. */
  committed(topic: string, groupId: string): Promise<Map<number, number>> {
    // A fresh cluster answers "coordinator loading" until its offsets topic exists.
    return whileRetriable(() => committedOffsets(this.admin, topic, groupId));
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => {});
    this.client = undefined;
  }
}
