import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { createKafka, ensureTopics, EventLogWriter, LogBackpressureError } from "./kafka-log.ts";

// Crash survived: none; these pin the writer's batching against a real broker.
describe("EventLogWriter", () => {
  const kafka = createKafka({ brokers: inject("kafkaBrokers").split(","), clientId: "evb-test", logger: silentLogger });
  const topic = `t${randomBytes(4).toString("hex")}.log.1`;
  const writer = new EventLogWriter(kafka);
  beforeAll(async () => {
    await ensureTopics(kafka, [topic], 3, 1);
  });
  afterAll(async () => {
    await writer.close();
  });

  it("concurrent large publishes are not rejected together as MESSAGE_TOO_LARGE", async () => {
    // 200 × 10 KB for one topic (one partition) in one request would exceed the broker's 1 MiB message.max.bytes.
    const value = Buffer.alloc(10_240, "x");
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => writer.append(topic, "one-topic", value)));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);

    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    expect(offsets.reduce((n, p) => n + Number(p.high), 0)).toBe(200);
  });

  it("refuses at once when the queue is full instead of queueing without bound", async () => {
    const tiny = new EventLogWriter(kafka, { maxQueued: 2 });
    const value = Buffer.from("v");
    const pending = [tiny.append(topic, "a", value), tiny.append(topic, "b", value)];
    // The first append is already taken for sending; fill the queue behind it.
    const more = [tiny.append(topic, "c", value), tiny.append(topic, "d", value), tiny.append(topic, "e", value)];
    const settled = await Promise.allSettled([...pending, ...more]);
    const refused = settled.filter((r) => r.status === "rejected" && r.reason instanceof LogBackpressureError);
    expect(refused.length).toBeGreaterThan(0);
    expect(settled.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(2);
    await tiny.close();
  });
});

// Crash survived: none; pins start-up against a broker whose metadata lags topic creation.
describe("ensureTopics", () => {
  const kafka = createKafka({ brokers: inject("kafkaBrokers").split(","), clientId: "evb-test-topics", logger: silentLogger });

  it("returns only when every partition of many new topics, created at once by several services, has a leader", async () => {
    const tag = randomBytes(4).toString("hex");
    const names = Array.from({ length: 8 }, (_, i) => `t${tag}.log.${i}`);
    // Three "services" prepare the same topics at the same moment, as indexers and gateways do on a cold start.
    await Promise.all([1, 2, 3].map(() => ensureTopics(kafka, names, 3, 1)));

    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      expect(topics.map((t) => t.name).sort()).toEqual([...names].sort());
      for (const t of topics) {
        expect(t.partitions).toHaveLength(3);
        expect(t.partitions.every((p) => p.leader >= 0)).toBe(true);
      }
    } finally {
      await admin.disconnect();
    }
  });
});
