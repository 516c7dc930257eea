import { randomBytes } from "node:crypto";
import { ConfigResourceTypes } from "@platformatic/kafka";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { classifyKafkaFailure, silentLogger } from "@evb/domain";
import { ensureTopics } from "./kafka-admin.ts";
import { createKafka } from "./kafka-client.ts";
import { LogInspector } from "./log-inspector.ts";
import { LogBackpressureError } from "./log-writer.ts";
import { createLogWriter, platformaticProducer } from "./platformatic-producer.ts";

const kafka = createKafka({ brokers: inject("kafkaBrokers").split(","), clientId: "evb-test", logger: silentLogger });
const inspector = new LogInspector({ kafka });
afterAll(async () => {
  await inspector.close();
});

// Crash survived: none; these pin the writer's batching against a real broker.
describe("the log writer on a real broker", () => {
  const topic = `t${randomBytes(4).toString("hex")}.log.1`;
  const writer = createLogWriter(kafka);
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
    const offsets = await inspector.offsets(topic);
    expect(offsets.reduce((n, p) => n + p.high, 0)).toBe(200);
  });

  it("refuses at once when the queue is full instead of queueing without bound", async () => {
    const tiny = createLogWriter(kafka, { maxQueued: 2 });
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

  it("a record the broker refuses is classified from the client's own fields as certainly not written", async () => {
    // Past the broker's 1 MiB message.max.bytes on its own.
    const producer = platformaticProducer(kafka, "refused");
    await producer.start();
    const err = await producer.send([{ topic, key: Buffer.from("big"), value: Buffer.alloc(1_200_000, "y") }]).catch((e: unknown) => e);
    await producer.close();
    expect(err).toBeInstanceOf(Error);
    expect(classifyKafkaFailure(err)).toBe("LOG_REFUSED");
  });
});

// Crash survived: none; pins start-up against a broker whose metadata lags topic creation.
describe("ensureTopics", () => {
  it("returns only when every partition of many new topics, created at once by several services, has a leader", async () => {
    const tag = randomBytes(4).toString("hex");
    const names = Array.from({ length: 8 }, (_, i) => `t${tag}.log.${i}`);
    // Three "services" prepare the same topics at the same moment, as indexers and gateways do on a cold start.
    await Promise.all([1, 2, 3].map(() => ensureTopics(kafka, names, 3, 1)));

    const admin = kafka.admin();
    try {
      const { topics } = await admin.metadata({ topics: names, forceUpdate: true });
      expect([...topics.keys()].sort()).toEqual([...names].sort());
      for (const t of topics.values()) {
        expect(t.partitions).toHaveLength(3);
        expect(t.partitions.every((p) => p.leader >= 0)).toBe(true);
      }
    } finally {
      await admin.close();
    }
  });

  it("creates a topic with its configs, and the inspector reads its identity and offsets", async () => {
    const topic = `t${randomBytes(4).toString("hex")}.chain.1`;
    await ensureTopics(kafka, [topic], 1, 1, [{ name: "cleanup.policy", value: "compact" }]);
    const admin = kafka.admin();
    try {
      const [described] = await admin.describeConfigs({
        resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: ["cleanup.policy"] }],
      });
      expect(described?.configs.find((c) => c.name === "cleanup.policy")?.value).toBe("compact");
    } finally {
      await admin.close();
    }
    const identity = await inspector.identity(topic);
    expect(identity.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(identity.topicId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await inspector.offsets(topic)).toEqual([{ partition: 0, low: 0, high: 0 }]);
    expect(await inspector.committed(topic, `nobody-${randomBytes(4).toString("hex")}`)).toEqual(new Map());
  });
});
