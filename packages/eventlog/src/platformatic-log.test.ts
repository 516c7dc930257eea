import { randomBytes } from "node:crypto";
import { compatibilityPartitioner } from "@platformatic/kafka";
import { Partitioners } from "kafkajs";
import { describe, expect, it } from "vitest";
import { classifyKafkaFailure } from "@evb/domain";
import { LogBackpressureError } from "./kafka-log.ts";
import { type LaneProducer, laneOf, LogSendError, PlatformaticLogWriter } from "./platformatic-log.ts";

interface Sent {
  producer: number;
  messages: { topic: string; key: string; value: string }[];
  finish: (err?: unknown) => void;
}

/** Fake producers: each send waits until the test finishes it. */
function fakeProducers() {
  const sent: Sent[] = [];
  const closed: number[] = [];
  let made = 0;
  const create = (): LaneProducer => {
    const id = made++;
    return {
      initIdempotentProducer: async () => ({}),
      send: ({ messages }) =>
        new Promise((resolve, reject) => {
          sent.push({
            producer: id,
            messages: messages.map((m) => ({ topic: m.topic, key: m.key.toString(), value: m.value.toString() })),
            finish: (err) => (err ? reject(err) : resolve({})),
          });
        }),
      close: async () => {
        closed.push(id);
      },
    };
  };
  return { sent, closed, create, made: () => made };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("partitioning", () => {
  it("puts every key in the partition kafkajs's DefaultPartitioner picks, for any partition count", () => {
    const kafkajs = Partitioners.DefaultPartitioner();
    const keys = [
      "",
      "a",
      "orders/eu",
      "ünïcödé/トピック",
      ...Array.from({ length: 1_000 }, (_, i) => `t/${i}/${randomBytes(1 + (i % 40)).toString("base64")}`),
    ];
    const differ: string[] = [];
    const seen = new Set<number>();
    for (const partitions of [1, 3, 5, 12, 64]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
        partitionId,
        leader: 0,
        partitionErrorCode: 0,
        replicas: [0],
        isr: [0],
      }));
      for (const key of keys) {
        const theirs = kafkajs({ topic: "evb.log.1", partitionMetadata, message: { key, value: null } });
        // @platformatic/kafka takes the partitioner's number modulo the partition count.
        const bytes = Buffer.from(key);
        const ours = compatibilityPartitioner({ topic: "evb.log.1", key: bytes }, bytes) % partitions;
        if (ours !== theirs) differ.push(`${JSON.stringify(key)} over ${partitions}: ${ours} ≠ ${theirs}`);
        if (partitions === 64) seen.add(ours);
      }
    }
    expect(differ).toEqual([]);
    // Not trivially equal (e.g. both always 0): the keys spread over the partitions.
    expect(seen.size).toBe(64);
  });
});

describe("PlatformaticLogWriter (fake producers)", () => {
  it("keeps one request in flight per lane, sends lanes side by side, and keeps each key's order", async () => {
    const f = fakeProducers();
    const writer = new PlatformaticLogWriter({ brokers: [], clientId: "t", lanes: 4, createProducer: f.create });
    await writer.start();
    // Two keys in different lanes.
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const a = keys.find((k) => laneOf(Buffer.from(k), 4) === 0) as string;
    const b = keys.find((k) => laneOf(Buffer.from(k), 4) === 1) as string;
    const acks: string[] = [];
    const appends: Promise<unknown>[] = [];
    const append = (key: string, i: number) =>
      appends.push(writer.append("log", key, Buffer.from(`${key}${i}`)).then(() => acks.push(`${key}${i}`)));
    append(a, 0);
    append(b, 0);
    await tick();
    for (let i = 1; i < 3; i++) {
      append(a, i);
      append(b, i);
    }
    await tick();
    // The first append of each lane went at once, each on its own producer; the rest wait.
    expect(f.sent.map((s) => s.messages.map((m) => m.value))).toEqual([[`${a}0`], [`${b}0`]]);
    expect(new Set(f.sent.map((s) => s.producer)).size).toBe(2);
    expect(writer.waiting).toBe(6);
    expect(writer.queued).toBe(4);

    f.sent[1]?.finish();
    await tick();
    // Lane b's next request gathers what waited, in append order; lane a still waits.
    expect(f.sent.slice(2).map((s) => s.messages.map((m) => m.value))).toEqual([[`${b}1`, `${b}2`]]);
    f.sent[0]?.finish();
    await tick();
    expect(f.sent[3]?.messages.map((m) => m.value)).toEqual([`${a}1`, `${a}2`]);
    f.sent[2]?.finish();
    f.sent[3]?.finish();
    await Promise.all(appends);
    expect(acks.filter((x) => x.startsWith(a))).toEqual([`${a}0`, `${a}1`, `${a}2`]);
    expect(acks.filter((x) => x.startsWith(b))).toEqual([`${b}0`, `${b}1`, `${b}2`]);
    expect(writer.waiting).toBe(0);
  });

  it("after a failed send, rejects that batch and never uses its producer again", async () => {
    const f = fakeProducers();
    const writer = new PlatformaticLogWriter({ brokers: [], clientId: "t", lanes: 1, createProducer: f.create });
    const first = writer.append("log", "k", Buffer.from("1"));
    await tick();
    const queuedBehind = writer.append("log", "k", Buffer.from("2"));
    f.sent[0]?.finish(new Error("request timed out"));
    await expect(first).rejects.toBeInstanceOf(LogSendError);
    await tick();
    // The record that waited goes on a fresh producer (its own producer id and sequence numbers).
    expect(f.closed).toEqual([0]);
    expect(f.sent[1]?.producer).toBe(1);
    f.sent[1]?.finish();
    await expect(queuedBehind).resolves.toBeUndefined();
  });

  it("names a broker's refusal so that the gateway answers ERROR, and anything else as uncertain", () => {
    const refused = new LogSendError(
      Object.assign(
        new AggregateError([Object.assign(new Error("too large"), { apiId: "MESSAGE_TOO_LARGE" })], "Producing messages failed."),
        {},
      ),
    );
    expect(refused.type).toBe("MESSAGE_TOO_LARGE");
    expect(classifyKafkaFailure(refused)).toBe("LOG_REFUSED");
    expect(classifyKafkaFailure(new LogSendError(new Error("Connection to 127.0.0.1:9092 failed.")))).toBe("LOG_UNCERTAIN");
  });

  it("refuses at once when the writer's queue is full", async () => {
    const f = fakeProducers();
    const writer = new PlatformaticLogWriter({ brokers: [], clientId: "t", lanes: 2, maxQueued: 2, createProducer: f.create });
    const settled = Promise.allSettled(["a", "b", "c", "d", "e", "f"].map((k) => writer.append("log", k, Buffer.from(k))));
    await tick();
    for (const s of f.sent) s.finish();
    await tick();
    for (const s of f.sent) s.finish();
    const results = await settled;
    expect(results.filter((r) => r.status === "rejected" && r.reason instanceof LogBackpressureError).length).toBeGreaterThan(0);
    expect(writer.cap).toBe(2);
  });

  it("caps a request at maxBatch records and maxBatchBytes", async () => {
    const sizes = async (maxBatch: number, maxBatchBytes: number) => {
      const counts: number[] = [];
      const createProducer = (): LaneProducer => ({
        initIdempotentProducer: async () => ({}),
        send: async ({ messages }) => counts.push(messages.length),
        close: async () => {},
      });
      const writer = new PlatformaticLogWriter({ brokers: [], clientId: "t", lanes: 1, maxBatch, maxBatchBytes, createProducer });
      // 8 records of 8 bytes each (key 1 + value 7), all queued before the first request.
      await Promise.all(Array.from({ length: 8 }, (_, i) => writer.append("log", "k", Buffer.from(`value-${i}`))));
      return counts;
    };
    expect(await sizes(3, 512 * 1024)).toEqual([3, 3, 2]);
    expect(await sizes(500, 17)).toEqual([2, 2, 2, 2]);
  });
});
