import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { createKafka, createLogWriter, ensureTopics, LogInspector } from "@evb/eventlog";
import { kafkaConsumers } from "./kafka-consumer.ts";
import type { ConsumerSettings, FetchedBatch, LogConsumer } from "./ports.ts";

const kafka = createKafka({ brokers: inject("kafkaBrokers").split(","), clientId: "evb-test-consumer", logger: silentLogger });
const inspector = new LogInspector({ kafka });
const consumers = kafkaConsumers(kafka);

const settings = (groupId: string): ConsumerSettings => ({
  groupId,
  maxBytesPerPartition: 1_048_576,
  maxWaitTimeInMs: 50,
  sessionTimeout: 10_000,
  rebalanceTimeout: 10_000,
  heartbeatInterval: 500,
  partitionsConsumedConcurrently: 8,
});

/** Polls `ok` every 50 ms for up to `ms`. */
async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A member that records every batch it is handed and resolves it unless `hold` says otherwise. */
function member(groupId: string) {
  const c = consumers.create(settings(groupId));
  const batches: { partition: number; offsets: number[] }[] = [];
  const assignments: Record<string, number[]>[] = [];
  const m = {
    c,
    batches,
    assignments,
    hold: (_b: FetchedBatch) => false,
    start: async (topic: string) => {
      await c.connect();
      await c.subscribe([topic]);
      c.onAssign((a) => assignments.push(a));
      await c.run(async (b) => {
        if (!b.current()) return;
        batches.push({ partition: b.partition, offsets: b.messages.map((x) => x.offset) });
        if (!m.hold(b)) b.resolve((b.messages.at(-1) as { offset: number }).offset);
      });
    },
  };
  return m;
}

const offsetsOf = (batches: { partition: number; offsets: number[] }[], partition: number) =>
  batches.filter((b) => b.partition === partition).flatMap((b) => b.offsets);

// Crash survived: none by itself; pins the semantics the indexer's supervisor and pipeline rely on
// (docs in ports.ts): a partition starts where the group committed (the log's start without a
// commit), moves on only as batches are resolved, is sought and paused on request, and a second
// member joining takes partitions over, each member told its assignment.
describe("the indexer's consumer-group member on @platformatic/kafka", () => {
  const topic = `t${randomBytes(4).toString("hex")}.log.1`;
  const groupId = `t-${randomBytes(4).toString("hex")}`;
  const writer = createLogWriter(kafka);
  const members: { c: LogConsumer }[] = [];

  beforeAll(async () => {
    await ensureTopics(kafka, [topic], 3, 1);
    // Ten records in each of the three partitions (these keys land in partitions 0, 1 and 2).
    const keys = ["orders/eu", "fo/a", "t/1/xxx"];
    await Promise.all(Array.from({ length: 30 }, (_, i) => writer.append(topic, keys[i % 3] as string, Buffer.from(`v${i}`))));
  });
  afterAll(async () => {
    for (const m of members) await m.c.disconnect();
    await writer.close();
    await inspector.close();
  });

  it("starts at the committed offset or the log's start, refetches what was not resolved, seeks and pauses", async () => {
    const ends = await inspector.offsets(topic);
    const p0 = ends[0] as { high: number };
    await consumersCommit(groupId, topic, 1, 3);
    const a = member(groupId);
    members.push(a);
    let held = 0;
    a.hold = (b) => b.partition === 0 && held++ === 0; // the first batch of partition 0 is not resolved
    await a.start(topic);
    expect(a.assignments[0]).toEqual({ [topic]: [0, 1, 2] });
    const total = ends.reduce((n, e) => n + e.high, 0);
    await until(
      "every record is read",
      () => new Set(a.batches.flatMap((b) => b.offsets.map((o) => `${b.partition}:${o}`))).size >= total - 3,
    );
    // Partition 1 started at its committed offset; partition 0 was read twice from its start.
    expect(Math.min(...offsetsOf(a.batches, 1))).toBe(3);
    expect(offsetsOf(a.batches, 0).filter((o) => o === 0)).toHaveLength(2);

    a.c.seek({ topic, partition: 2, offset: 1 });
    await until("partition 2 is read again from offset 1", () => offsetsOf(a.batches, 2).filter((o) => o === 1).length === 2);
    a.c.pause(topic);
    const before = a.batches.length;
    await a.c.commit([{ topic, partition: 0, offset: p0.high }]);
    await writer.append(topic, "orders/eu", Buffer.from("after the pause"));
    await new Promise((r) => setTimeout(r, 500));
    expect(a.batches.length).toBe(before);
    expect((await inspector.committed(topic, groupId)).get(0)).toBe(p0.high);
  });

  it("a second member joining takes partitions over; both are told their assignment", async () => {
    const groupB = `t-${randomBytes(4).toString("hex")}`;
    const one = member(groupB);
    const two = member(groupB);
    members.push(one, two);
    await one.start(topic);
    expect(one.assignments.at(-1)).toEqual({ [topic]: [0, 1, 2] });
    await two.start(topic);
    await until("the first member is told its smaller assignment", () => (one.assignments.at(-1)?.[topic]?.length ?? 0) < 3);
    const mine = one.assignments.at(-1)?.[topic] ?? [];
    const theirs = two.assignments.at(-1)?.[topic] ?? [];
    expect([...mine, ...theirs].sort()).toEqual([0, 1, 2]);
    await until("the second member reads its partitions", () => theirs.every((p) => offsetsOf(two.batches, p).length > 0));
  });
});

/** Commits `offset` for a partition as the group, before any member runs (a member that left). */
async function consumersCommit(groupId: string, topic: string, partition: number, offset: number): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.alterConsumerGroupOffsets({
      groupId,
      topics: [{ name: topic, partitionOffsets: [{ partition, offset: BigInt(offset) }] }],
    });
  } finally {
    await admin.close();
  }
}
