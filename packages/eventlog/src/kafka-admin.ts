import { type Admin, ListOffsetTimestamps } from "@platformatic/kafka";
import { classifyKafkaFailure, isRetriableKafkaFailure } from "@evb/domain";
import type { KafkaClient } from "./kafka-client.ts";

/** First offset held and next offset to be written, per partition. */
export interface PartitionOffsets {
  partition: number;
  low: number;
  high: number;
}

/** A topic config entry given at creation (`cleanup.policy`, `segment.ms`…). */
export interface TopicConfig {
  name: string;
  value: string;
}

/** Creates the topics that are missing (the log topics, one per group; the chain topics); existing ones are left alone. */
export async function ensureTopics(
  kafka: KafkaClient,
  names: string[],
  partitions: number,
  replicationFactor: number,
  configs: TopicConfig[] = [],
): Promise<void> {
  const admin = kafka.admin("topics");
  try {
    const existing = new Set(await admin.listTopics());
    const missing = names.filter((n) => !existing.has(n));
    if (missing.length > 0) {
      try {
        await admin.createTopics({ topics: missing, partitions, replicas: replicationFactor, configs });
      } catch (err) {
        // Another service created them between our list and create: that is what we wanted.
        if (classifyKafkaFailure(err) !== "LOG_TOPIC_EXISTS") throw err;
      }
    }
    await waitForLeaders(admin, names, 30_000);
  } finally {
    await admin.close();
  }
}

/**
 * The controller knows a new topic before every broker's metadata cache does; a reader that
 * starts in between is told the broker does not host the partition. So wait until a broker's
 * metadata shows a leader for every partition of every topic.
 */
async function waitForLeaders(admin: Admin, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const { topics } = await admin.metadata({ topics: names, forceUpdate: true });
      const led = names.every((n) => {
        const t = topics.get(n);
        return t !== undefined && t.partitions.length > 0 && t.partitions.every((p) => p !== undefined && p.leader >= 0);
      });
      if (led) return;
      last = new Error("some partitions have no leader yet");
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Kafka topics ${names.join(", ")} have no leaders after ${timeoutMs} ms: ${String(last)}`);
}

/** Each partition's start and end offsets (ListOffsets, earliest and latest), by partition. */
export async function topicOffsets(admin: Admin, topic: string): Promise<PartitionOffsets[]> {
  const md = await admin.metadata({ topics: [topic], forceUpdate: true });
  const count = md.topics.get(topic)?.partitionsCount ?? 0;
  const ask = async (timestamp: bigint) => {
    const partitions = Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp }));
    const [listed] = await admin.listOffsets({ topics: [{ name: topic, partitions }] });
    return new Map((listed?.partitions ?? []).map((p) => [p.partitionIndex, Number(p.offset)]));
  };
  const [low, high] = await Promise.all([ask(ListOffsetTimestamps.EARLIEST), ask(ListOffsetTimestamps.LATEST)]);
  return Array.from({ length: count }, (_, partition) => ({ partition, low: low.get(partition) ?? 0, high: high.get(partition) ?? 0 }));
}

/** A consumer group's committed offset per partition of a topic; a partition without one is absent. */
export async function committedOffsets(admin: Admin, topic: string, groupId: string): Promise<Map<number, number>> {
  const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
  const out = new Map<number, number>();
  for (const t of group?.topics ?? []) {
    if (t.name !== topic) continue;
    for (const p of t.partitions) if (p.committedOffset >= 0n) out.set(p.partitionIndex, Number(p.committedOffset));
  }
  return out;
}

/** Runs `fn` again while it fails with an answer the client marks retriable, for up to `timeoutMs`. */
export async function whileRetriable<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isRetriableKafkaFailure(err) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
