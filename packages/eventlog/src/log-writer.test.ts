import { compatibilityPartitioner, ProtocolError, ResponseError } from "@platformatic/kafka";
import { describe, expect, it } from "vitest";
import { classifyKafkaFailure } from "@evb/domain";
import { LogBackpressureError, LogSendError, LogWriterCore, laneOf, type ProducerAdapter } from "./log-writer.ts";

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
  const create = (): ProducerAdapter => {
    const id = made++;
    return {
      start: async () => {},
      send: (records) =>
        new Promise((resolve, reject) => {
          sent.push({
            producer: id,
            messages: records.map((m) => ({ topic: m.topic, key: m.key.toString(), value: m.value.toString() })),
            finish: (err) => (err ? reject(err) : resolve()),
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

/**
 * Where kafkajs's DefaultPartitioner (Java's murmur2, masked to 31 bits) put these keys over 1, 3,
 * 5, 12 and 64 partitions, taken from kafkajs 2.2.4 before it was removed: logs written by either
 * client keep each topic in the one partition.
 */
const KAFKAJS_PARTITIONS: [string, number[]][] = [
  ["", [0, 0, 1, 9, 25]],
  ["a", [0, 1, 4, 4, 60]],
  ["orders/eu", [0, 0, 0, 3, 27]],
  ["ünïcödé/トピック", [0, 1, 4, 4, 12]],
  ["fo/a", [0, 1, 1, 1, 53]],
  ["fo/b", [0, 1, 2, 1, 37]],
  ["21", [0, 0, 0, 0, 44]],
  ["foobar", [0, 0, 1, 6, 62]],
  ["a-little-bit-long-string", [0, 2, 2, 8, 32]],
  ["t/0/", [0, 1, 4, 4, 4]],
  ["t/1/xxx", [0, 2, 0, 8, 56]],
  ["t/2/xxxxxx", [0, 2, 2, 5, 5]],
  ["t/3/xxxxxxxxx", [0, 1, 0, 1, 45]],
  ["t/4/xxxxxxxxxxxx", [0, 0, 4, 9, 9]],
  ["t/5/xxxxxxxxxxxxxxx", [0, 0, 0, 3, 39]],
  ["t/6/xxxxxxxxxxxxxxxxxx", [0, 2, 2, 8, 60]],
  ["t/7/xxxxxxxxxxxxxxxxxxxxx", [0, 0, 2, 0, 60]],
  ["t/8/xxxxxxxxxxxxxxxxxxxxxxxx", [0, 1, 0, 10, 62]],
  ["t/9/xxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 1, 0, 1, 5]],
  ["t/10/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 0, 4, 0, 40]],
  ["t/11/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 2, 1, 11, 51]],
  ["t/12/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 2, 3, 2, 42]],
  ["t/13/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 1, 1, 7, 63]],
  ["t/14/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 2, 1, 8, 56]],
  ["t/15/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", [0, 0, 0, 6, 14]],
];

describe("partitioning", () => {
  it("puts every key in the partition kafkajs's DefaultPartitioner picked, for any partition count", () => {
    const differ: string[] = [];
    for (const [key, partitions] of KAFKAJS_PARTITIONS) {
      [1, 3, 5, 12, 64].forEach((count, i) => {
        const bytes = Buffer.from(key);
        // @platformatic/kafka takes the partitioner's number modulo the partition count.
        const ours = compatibilityPartitioner({ topic: "evb.log.1", key: bytes }, bytes) % count;
        if (ours !== partitions[i]) differ.push(`${JSON.stringify(key)} over ${count}: ${ours} ≠ ${partitions[i]}`);
      });
    }
    expect(differ).toEqual([]);
  });
});

describe("LogWriterCore (fake producers)", () => {
  it("keeps one request in flight per lane, sends lanes side by side, and keeps each key's order", async () => {
    const f = fakeProducers();
    const writer = new LogWriterCore(f.create, { lanes: 4 });
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
    const writer = new LogWriterCore(f.create);
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

  it("sends an append made in the turn the queue emptied", async () => {
    const f = fakeProducers();
    const writer = new LogWriterCore(f.create);
    const first = writer.append("log", "k", Buffer.from("1"));
    await tick();
    // Made as soon as the first answer is taken in, before that lane's run has looked again.
    const second = first.then(() => writer.append("log", "k", Buffer.from("2")));
    f.sent[0]?.finish();
    await first;
    await tick();
    expect(f.sent).toHaveLength(2);
    f.sent[1]?.finish();
    await expect(second).resolves.toBeUndefined();
  });

  it("keeps the client's error as the cause, where the classifier reads the broker's answer", () => {
    const tooLarge = new ResponseError(0, 9, { "/responses/0/partitionResponses/0": [10, null] }, {});
    const refused = new LogSendError(tooLarge);
    expect(refused.message).toMatch(/^Kafka send failed: /);
    expect(classifyKafkaFailure(refused)).toBe("LOG_REFUSED");
    expect(classifyKafkaFailure(new LogSendError(new ProtocolError("REQUEST_TIMED_OUT")))).toBe("LOG_UNCERTAIN");
    expect(classifyKafkaFailure(new LogSendError(new Error("Connection to 127.0.0.1:9092 failed.")))).toBe("LOG_UNCERTAIN");
  });

  it("refuses at once when the writer's queue is full", async () => {
    const f = fakeProducers();
    const writer = new LogWriterCore(f.create, { lanes: 2, maxQueued: 2 });
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
      const create = (): ProducerAdapter => ({
        start: async () => {},
        send: async (records) => {
          counts.push(records.length);
        },
        close: async () => {},
      });
      const writer = new LogWriterCore(create, { maxBatch, maxBatchBytes });
      // 8 records of 8 bytes each (key 1 + value 7), all queued before the first request.
      await Promise.all(Array.from({ length: 8 }, (_, i) => writer.append("log", "k", Buffer.from(`value-${i}`))));
      return counts;
    };
    expect(await sizes(3, 512 * 1024)).toEqual([3, 3, 2]);
    expect(await sizes(500, 17)).toEqual([2, 2, 2, 2]);
  });

  it("closes its producer once what waits was sent", async () => {
    const f = fakeProducers();
    const writer = new LogWriterCore(f.create);
    const appended = writer.append("log", "k", Buffer.from("1"));
    await tick();
    let closed = false;
    const closing = writer.close().then(() => {
      closed = true;
    });
    await tick();
    expect(closed).toBe(false);
    f.sent[0]?.finish();
    await appended;
    await closing;
    expect(f.closed).toEqual([0]);
  });
});
