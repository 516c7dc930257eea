import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { ensureTopics } from "./kafka-admin.ts";
import { createKafka } from "./kafka-client.ts";
import { LogInspector } from "./log-inspector.ts";
import { type LogWriter, LogWriterCore, type ProducedRecord, type ProducerAdapter } from "./log-writer.ts";
import { platformaticProducer } from "./platformatic-producer.ts";
import { readOffsetRanges } from "./range-reader.ts";

const brokers = inject("kafkaBrokers").split(",");
const kafka = createKafka({ brokers, clientId: "evb-test-writers", logger: silentLogger });
const inspector = new LogInspector({ kafka });

/**
 * Every client adapter of the writer core (`ProducerAdapter`), by name. The suite below runs
 * against each, with one lane and with four; a second client is one more line here.
 */
const ADAPTERS: [string, (clientId: string) => ProducerAdapter][] = [["@platformatic/kafka", (id) => platformaticProducer(kafka, id)]];

/** Every record of a topic, per partition in log order, as `key → values`. */
async function readBack(
  topic: string,
): Promise<{ values: string[]; byKey: Map<string, string[]>; partitionsOfKey: Map<string, Set<number>> }> {
  const offsets = await inspector.offsets(topic);
  const ranges = new Map(offsets.map((o) => [o.partition, { from: o.low, to: o.high - 1 }]));
  const read = await readOffsetRanges(kafka, topic, ranges);
  const values: string[] = [];
  const byKey = new Map<string, string[]>();
  const partitionsOfKey = new Map<string, Set<number>>();
  for (const [partition, messages] of read) {
    for (const m of [...messages].sort((a, b) => a.offset - b.offset)) {
      const key = String(m.key);
      values.push(String(m.value));
      byKey.set(key, [...(byKey.get(key) ?? []), String(m.value)]);
      partitionsOfKey.set(key, (partitionsOfKey.get(key) ?? new Set()).add(partition));
    }
  }
  return { values, byKey, partitionsOfKey };
}

/**
 * Appends `waves` × `perWave` records over `keys` keys, each wave all at once (thousands of
 * appends in flight together), and returns what was acknowledged and what was refused.
 */
async function appendMany(writer: LogWriter, topic: string, keys: number, waves: number, perWave: number, tag = "") {
  const acked: { key: string; value: string }[] = [];
  const failed: string[] = [];
  let n = 0;
  for (let w = 0; w < waves; w++) {
    const wave = Array.from({ length: perWave }, () => {
      const key = `topic-${n % keys}`;
      // The value carries the key's own sequence: the order the appends were made in.
      const value = `${key}#${tag}${String(Math.floor(n / keys)).padStart(6, "0")}`;
      n++;
      return writer.append(topic, key, Buffer.from(value)).then(
        () => acked.push({ key, value }),
        () => failed.push(value),
      );
    });
    await Promise.all(wave);
  }
  return { acked, failed };
}

/** Every acknowledged record exactly once; nothing twice; each key's records in append order, in one partition. */
function expectSound(read: Awaited<ReturnType<typeof readBack>>, acked: { key: string; value: string }[], failed: string[]): void {
  const count = new Map<string, number>();
  for (const v of read.values) count.set(v, (count.get(v) ?? 0) + 1);
  expect([...count].filter(([, c]) => c > 1)).toEqual([]);
  expect(acked.filter((a) => count.get(a.value) !== 1).map((a) => a.value)).toEqual([]);
  // Nothing in the log that was neither acknowledged nor refused (a refused send may have landed).
  const known = new Set([...acked.map((a) => a.value), ...failed]);
  expect(read.values.filter((v) => !known.has(v))).toEqual([]);
  for (const [key, values] of read.byKey) {
    expect([...values].sort(), `order of ${key}`).toEqual(values);
    expect(read.partitionsOfKey.get(key)?.size, `partitions of ${key}`).toBe(1);
  }
}

/** Fails the n-th send of each producer made, after it did reach Kafka (or before, when `before`). */
function failingNth(nth: number, before: boolean) {
  let failures = 0;
  return {
    failures: () => failures,
    wrap<T extends (...args: never[]) => Promise<unknown>>(send: T): T {
      let calls = 0;
      return (async (...args: Parameters<T>) => {
        calls++;
        if (calls === nth && before) {
          failures++;
          throw new Error("injected failure before sending");
        }
        const result = await send(...args);
        if (calls === nth) {
          failures++;
          throw new Error("injected failure after Kafka wrote the request (a lost answer)");
        }
        return result;
      }) as T;
    },
  };
}

const writers: LogWriter[] = [];
afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()));
  await inspector.close();
});

/** The writer core over an adapter, each producer's n-th send failed when `failing` is given. */
function writerOn(adapter: (clientId: string) => ProducerAdapter, lanes: number, failing?: ReturnType<typeof failingNth>): LogWriter {
  const writer = new LogWriterCore(
    (generation) => {
      const p = adapter(`writer-${generation}`);
      return failing
        ? { start: () => p.start(), close: () => p.close(), send: failing.wrap((r: readonly ProducedRecord[]) => p.send(r)) }
        : p;
    },
    { lanes },
  );
  writers.push(writer);
  return writer;
}

// Crash survived: a lost produce answer (the request written, the answer never seen) and a send
// that fails outright, each followed by a producer replacement; pins kafkajs #1005's class of bug
// (acknowledged records dropped as duplicates) out of the writer core on every adapter.
describe.each(ADAPTERS.flatMap(([name, adapter]) => [1, 4].map((lanes) => [`${name}, ${lanes} lane(s)`, adapter, lanes] as const)))(
  "log writer on %s",
  (_name, adapter, lanes) => {
    const make = (failing?: ReturnType<typeof failingNth>) => writerOn(adapter, lanes, failing);
    it("loses nothing and duplicates nothing with thousands of concurrent appends, and keeps each key's order", async () => {
      const topic = `t${randomBytes(4).toString("hex")}.log.1`;
      await ensureTopics(kafka, [topic], 3, 1);
      const writer = make();
      await writer.start();
      const { acked, failed } = await appendMany(writer, topic, 40, 4, 1_500);
      expect(failed).toEqual([]);
      expect(acked).toHaveLength(6_000);
      expectSound(await readBack(topic), acked, failed);
    });

    it("stays sound across producer replacements, after lost answers and after failed sends", async () => {
      const topic = `t${randomBytes(4).toString("hex")}.log.1`;
      await ensureTopics(kafka, [topic], 3, 1);
      for (const before of [false, true]) {
        const failing = failingNth(3, before);
        const writer = make(failing);
        await writer.start();
        const { acked, failed } = await appendMany(writer, topic, 40, 12, 300, before ? "b" : "a");
        expect(failing.failures()).toBeGreaterThanOrEqual(2);
        expect(failed.length).toBeGreaterThan(0);
        expect(acked.length).toBeGreaterThan(0);
        const read = await readBack(topic);
        // Earlier rounds' records are in the topic too; check this round's.
        const mine = new Set([...acked.map((a) => a.value), ...failed]);
        const own = { ...read, values: read.values.filter((v) => mine.has(v)) };
        expectSound(own, acked, failed);
        if (!before) {
          // A lost answer: the failed records are in the log, once each, and no later record was
          // taken for a duplicate of them.
          expect(failed.filter((v) => !own.values.includes(v))).toEqual([]);
        } else {
          expect(failed.filter((v) => own.values.includes(v))).toEqual([]);
        }
      }
    });
  },
);
