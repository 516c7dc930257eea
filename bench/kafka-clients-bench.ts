/**
 * `npm run bench:kafka-clients`: kafkajs against @platformatic/kafka on the same broker, on both
 * sides of the log, so that the choice of client rests on figures. Not a test: nothing asserts.
 *
 * 1. Requests: BENCH_BATCH records per produce request, one request in flight, idempotent,
 *    acks = all, no compression, 3 partitions, 16 keys: records/s, request p50/p99, CPU.
 * 2. One record per request, one in flight: how long a produce takes on this machine.
 * 3. The gateway's writers (`EventLogWriter` on kafkajs, `PlatformaticLogWriter`), driven the
 *    way publishes drive them: C appenders, each appending its next record when the previous is
 *    acknowledged, over 16 topic names: appends/s and append latency, i.e. the produce plus the
 *    time a record waits behind the request in flight.
 * 4. Consumers, the way the indexer reads (a consumer group, 50 ms fetch wait, manual commits):
 *    at a low rate (records produced one by one, BENCH_SLOW_RATE per second), the time from
 *    the producer's acknowledgement to delivery; at a high rate (BENCH_RECORDS records already
 *    in the log), records/s delivered from first to last.
 *   BENCH_RECORDS (default 100000), BENCH_BATCH (500), BENCH_CONTENT_BYTES (256), BENCH_ROUNDS
 *   (2: the clients alternate, to even out a warming broker), BENCH_SECONDS (3, per writer
 *   load), BENCH_SLOW_RATE (200).
 */
import { randomBytes } from "node:crypto";
import { Consumer, MessagesStreamModes, ProduceAcks, Producer } from "@platformatic/kafka";
import { consoleProgress } from "@evb/devstack";
import { silentLogger } from "@evb/domain";
import { createKafka, ensureTopics, EventLogWriter, type LogWriter, PlatformaticLogWriter } from "@evb/eventlog";
import { percentile, startBenchStack } from "./bench-system.ts";

const records = Number(process.env.BENCH_RECORDS ?? 100_000);
const batch = Number(process.env.BENCH_BATCH ?? 500);
const contentBytes = Number(process.env.BENCH_CONTENT_BYTES ?? 256);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const slowRate = Number(process.env.BENCH_SLOW_RATE ?? 200);
const names = ["kafkajs", "@platformatic/kafka"] as const;
type ClientName = (typeof names)[number];

interface Client {
  send(messages: { topic: string; key: Buffer; value: Buffer }[]): Promise<void>;
  close(): Promise<void>;
}

async function openClient(name: ClientName, brokers: string[]): Promise<Client> {
  if (name === "kafkajs") {
    const producer = createKafka({ brokers, clientId: "bench-kafkajs", logger: silentLogger }).producer({
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    return {
      async send(messages) {
        const topic = messages[0]?.topic as string;
        await producer.sendBatch({
          acks: -1, // compression: none is kafkajs's default, as in EventLogWriter
          topicMessages: [{ topic, messages: messages.map((m) => ({ key: m.key, value: m.value })) }],
        });
      },
      close: () => producer.disconnect(),
    };
  }
  const producer = new Producer({ clientId: "bench-platformatic", bootstrapBrokers: brokers, idempotent: true, acks: ProduceAcks.ALL });
  return {
    async send(messages) {
      await producer.send({ messages });
    },
    close: () => producer.close(),
  };
}

const keys = Array.from({ length: 16 }, (_, i) => Buffer.from(`bench/topic-${i}`));

async function freshTopic(brokers: string[]): Promise<string> {
  // A fresh topic per measurement, so neither client appends behind the other's records.
  const topic = `bench${randomBytes(4).toString("hex")}.log.1`;
  await ensureTopics(createKafka({ brokers, clientId: "bench-admin", logger: silentLogger }), [topic], 3, 1);
  return topic;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1000;
}

async function requests(name: ClientName, client: Client, topic: string, size: number, count: number): Promise<string> {
  const value = randomBytes(contentBytes);
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let sent = 0;
  let lastReport = t0;
  while (sent < count) {
    const n = Math.min(size, count - sent);
    const messages = Array.from({ length: n }, (_, i) => ({ topic, key: keys[(sent + i) % keys.length] as Buffer, value }));
    const s = performance.now();
    await client.send(messages);
    latencies.push(performance.now() - s);
    sent += n;
    if (performance.now() - lastReport > 2000) {
      consoleProgress(`bench: ${name} ${sent}/${count} records`);
      lastReport = performance.now();
    }
  }
  const secs = (performance.now() - t0) / 1000;
  const cpuPer1000 = (cpuMs(cpu0) / count) * 1000;
  latencies.sort((a, b) => a - b);
  return `| ${name} | ${Math.round(count / secs)} | ${percentile(latencies, 50)} ms | ${percentile(latencies, 99)} ms | ${cpuPer1000.toFixed(1)} ms |`;
}

function openWriter(name: ClientName, brokers: string[], lanes: number): LogWriter {
  if (name === "kafkajs") return new EventLogWriter(createKafka({ brokers, clientId: "bench-writer", logger: silentLogger }));
  return new PlatformaticLogWriter({ brokers, clientId: "bench-writer", lanes });
}

/** C appenders in a closed loop for `seconds`: appends/s and append latency. */
async function writerLoad(name: string, writer: LogWriter, topic: string, appenders: number): Promise<string> {
  const value = randomBytes(contentBytes);
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: appenders }, async (_, a) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const key = (keys[(a + i * appenders) % keys.length] as Buffer).toString();
        const s = performance.now();
        await writer.append(topic, key, value);
        latencies.push(performance.now() - s);
        n++;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  latencies.sort((x, y) => x - y);
  return `| ${appenders} | ${name} | ${Math.round(n / secs)} | ${percentile(latencies, 50)} / ${percentile(latencies, 90)} / ${percentile(latencies, 99)} ms | ${((cpuMs(cpu0) / n) * 1000).toFixed(0)} ms |`;
}

interface Reader {
  /** Resolves once the consumer has joined and will deliver; `onRecord` is called per record. */
  started: Promise<void>;
  close(): Promise<void>;
}

function openReader(name: ClientName, brokers: string[], topic: string, onRecord: (value: Buffer) => void): Reader {
  const groupId = `bench-${randomBytes(4).toString("hex")}`;
  if (name === "kafkajs") {
    const consumer = createKafka({ brokers, clientId: "bench-reader", logger: silentLogger }).consumer({
      groupId,
      maxWaitTimeInMs: 50,
      maxBytesPerPartition: 1 << 20,
      allowAutoTopicCreation: false,
    });
    const started = (async () => {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch: b }) => {
          for (const m of b.messages) onRecord(m.value as Buffer);
        },
      });
      await joined;
    })();
    return { started, close: () => consumer.disconnect() };
  }
  const consumer = new Consumer({ groupId, clientId: "bench-reader", bootstrapBrokers: brokers, maxWaitTime: 50, autocommit: false });
  const started = (async () => {
    const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST, autocommit: false });
    stream.on("data", (m: { value: Buffer }) => onRecord(m.value));
  })();
  return { started, close: () => consumer.close(true) };
}

/** Records produced one by one at `slowRate`/s; latency from the producer's acknowledgement to delivery. */
async function consumeSlow(name: ClientName, brokers: string[], producer: Client): Promise<string> {
  const topic = await freshTopic(brokers);
  const acked = new Map<string, number>();
  const early = new Map<string, number>();
  const latencies: number[] = [];
  const reader = openReader(name, brokers, topic, (v) => {
    const id = v.toString();
    const at = acked.get(id);
    if (at === undefined) early.set(id, performance.now());
    else latencies.push(performance.now() - at);
  });
  await reader.started;
  await new Promise((r) => setTimeout(r, 1_000)); // let the first fetches settle
  const count = slowRate * seconds;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / slowRate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = `r${i}`;
    await producer.send([{ topic, key: keys[i % keys.length] as Buffer, value: Buffer.from(id) }]);
    const now = performance.now();
    const seen = early.get(id);
    // Delivered before the acknowledgement came back: count it as 0.
    if (seen !== undefined) latencies.push(0);
    else acked.set(id, now);
  }
  const until = performance.now() + 5_000;
  while (latencies.length < count && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
  await reader.close();
  latencies.sort((a, b) => a - b);
  return `| ${name} | ${slowRate}/s | ${latencies.length}/${count} | ${percentile(latencies, 50)} / ${percentile(latencies, 90)} / ${percentile(latencies, 99)} ms |`;
}

/** BENCH_RECORDS records already in the log, read from the start: records/s from first to last delivery. */
async function consumeFast(name: ClientName, brokers: string[], producer: Client): Promise<string> {
  const topic = await freshTopic(brokers);
  const value = randomBytes(contentBytes);
  for (let sent = 0; sent < records; sent += batch) {
    const n = Math.min(batch, records - sent);
    await producer.send(Array.from({ length: n }, (_, i) => ({ topic, key: keys[(sent + i) % keys.length] as Buffer, value })));
  }
  let got = 0;
  let first = 0;
  let last = 0;
  let done: () => void = () => {};
  const all = new Promise<void>((r) => {
    done = r;
  });
  const cpu0 = process.cpuUsage();
  const reader = openReader(name, brokers, topic, () => {
    if (got === 0) first = performance.now();
    if (++got === records) {
      last = performance.now();
      done();
    }
  });
  await reader.started;
  await Promise.race([all, new Promise((r) => setTimeout(r, 120_000))]);
  const cpu = cpuMs(cpu0);
  await reader.close();
  const secs = ((last || performance.now()) - first) / 1000;
  return `| ${name} | ${got}/${records} | ${Math.round(got / secs)} | ${((cpu / Math.max(1, got)) * 1000).toFixed(1)} ms |`;
}

const stack = await startBenchStack();
const brokers = stack.kafkaBrokers.split(",");
const out = { requests: [] as string[], single: [] as string[], writers: [] as string[], slow: [] as string[], fast: [] as string[] };
try {
  for (let round = 1; round <= rounds; round++) {
    for (const name of names) {
      consoleProgress(`bench: round ${round}, ${name}`);
      const client = await openClient(name, brokers);
      try {
        const topic = await freshTopic(brokers);
        await client.send([{ topic, key: Buffer.from("warm-up"), value: Buffer.from("warm-up") }]);
        out.requests.push(await requests(name, client, topic, batch, records));
        out.single.push(await requests(name, client, topic, 1, Math.min(records, 3_000)));
      } finally {
        await client.close();
      }
      // platformatic with its default 4 lanes and with 1 (the client alone, kafkajs's shape).
      for (const lanes of name === "kafkajs" ? [1] : [4, 1]) {
        for (const appenders of [1, 8, 64]) {
          const topic = await freshTopic(brokers);
          const writer = openWriter(name, brokers, lanes);
          try {
            await writer.start();
            await writer.append(topic, "warm-up", Buffer.from("warm-up"));
            out.writers.push(await writerLoad(name === "kafkajs" ? name : `${name}, ${lanes} lane(s)`, writer, topic, appenders));
          } finally {
            await writer.close();
          }
        }
      }
      // Both consumers read records one producer wrote (platformatic, the faster), so only the consumer differs.
      const producer = await openClient("@platformatic/kafka", brokers);
      try {
        out.slow.push(await consumeSlow(name, brokers, producer));
        out.fast.push(await consumeFast(name, brokers, producer));
      } finally {
        await producer.close();
      }
    }
  }
} finally {
  await stack.stop();
}
const print = (title: string, head: string, lines: string[]) => {
  console.log(`\n${title}\n`);
  console.log(head);
  console.log(
    `|${head
      .split("|")
      .slice(1, -1)
      .map(() => "---")
      .join("|")}|`,
  );
  for (const l of lines) console.log(l);
};
print(
  `${records} records of ${contentBytes} bytes, ${batch} per request, one request in flight, acks = all, idempotent:`,
  "| client | records/s | request p50 | request p99 | CPU per 1000 records |",
  out.requests,
);
print(
  "One record per request, one in flight (how long a produce takes):",
  "| client | records/s | request p50 | request p99 | CPU per 1000 records |",
  out.single,
);
print(
  `The gateway's writers, closed loop over 16 topic names for ${seconds} s (latency: append to acknowledgement):`,
  "| appenders | writer | appends/s | p50 / p90 / p99 | CPU per 1000 appends |",
  out.writers,
);
print(
  "Consumers at a low rate (produced one by one; latency from the producer's acknowledgement to delivery):",
  "| consumer | rate | delivered | p50 / p90 / p99 |",
  out.slow,
);
print(
  `Consumers at a high rate (${records} records already in the log, read from the start):`,
  "| consumer | delivered | records/s, first to last | CPU per 1000 records |",
  out.fast,
);
