/**
 * `npm run bench:kafka-clients`: the producer path of the gateway, measured with kafkajs (what
 * the services use) and with @platformatic/kafka (the maintained alternative), against the same
 * broker, so that the choice of client rests on figures. Not a test: nothing here asserts.
 *
 * Both produce the same records the way `EventLogWriter` does: idempotent, acks = all, no
 * compression, one request in flight, BENCH_BATCH records per request over a 3-partition topic
 * keyed by one of 16 topic names. Printed per client: records/s, request latency p50/p99 and
 * this process's CPU time per 1000 records (on a 2-core machine, CPU the gateway spends on
 * Kafka is CPU it cannot spend on HTTP).
 *   BENCH_RECORDS (default 100000), BENCH_BATCH (default 500), BENCH_CONTENT_BYTES (default 256),
 *   BENCH_ROUNDS (default 2: the clients alternate, to even out a warming broker).
 */
import { randomBytes } from "node:crypto";
import { ProduceAcks, Producer } from "@platformatic/kafka";
import { consoleProgress } from "@evb/devstack";
import { silentLogger } from "@evb/domain";
import { createKafka, ensureTopics } from "@evb/eventlog";
import { percentile, startBenchStack } from "./bench-system.ts";

const records = Number(process.env.BENCH_RECORDS ?? 100_000);
const batch = Number(process.env.BENCH_BATCH ?? 500);
const contentBytes = Number(process.env.BENCH_CONTENT_BYTES ?? 256);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);

interface Client {
  name: string;
  send(messages: { topic: string; key: Buffer; value: Buffer }[]): Promise<void>;
  close(): Promise<void>;
}

async function kafkajsClient(brokers: string[]): Promise<Client> {
  const producer = createKafka({ brokers, clientId: "bench-kafkajs", logger: silentLogger }).producer({
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  return {
    name: "kafkajs",
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

function platformaticClient(brokers: string[]): Client {
  const producer = new Producer({ clientId: "bench-platformatic", bootstrapBrokers: brokers, idempotent: true, acks: ProduceAcks.ALL });
  return {
    name: "@platformatic/kafka",
    async send(messages) {
      await producer.send({ messages });
    },
    close: () => producer.close(),
  };
}

async function measure(client: Client, topic: string): Promise<string> {
  const value = randomBytes(contentBytes);
  const keys = Array.from({ length: 16 }, (_, i) => Buffer.from(`bench/topic-${i}`));
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let sent = 0;
  let lastReport = t0;
  while (sent < records) {
    const size = Math.min(batch, records - sent);
    const messages = Array.from({ length: size }, (_, i) => ({ topic, key: keys[(sent + i) % keys.length] as Buffer, value }));
    const s = performance.now();
    await client.send(messages);
    latencies.push(performance.now() - s);
    sent += size;
    if (performance.now() - lastReport > 2000) {
      consoleProgress(`bench: ${client.name} ${sent}/${records} records`);
      lastReport = performance.now();
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuMsPer1000 = ((cpu.user + cpu.system) / 1000 / records) * 1000;
  latencies.sort((a, b) => a - b);
  return `| ${client.name} | ${Math.round(records / seconds)} | ${percentile(latencies, 50)} ms | ${percentile(latencies, 99)} ms | ${cpuMsPer1000.toFixed(1)} ms |`;
}

const stack = await startBenchStack();
const brokers = stack.kafkaBrokers.split(",");
const lines: string[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const make of [() => kafkajsClient(brokers), async () => platformaticClient(brokers)]) {
      // A fresh topic per measurement, so neither client appends behind the other's records.
      const topic = `bench${randomBytes(4).toString("hex")}.log.1`;
      await ensureTopics(createKafka({ brokers, clientId: "bench-admin", logger: silentLogger }), [topic], 3, 1);
      const client = await make();
      try {
        await client.send([{ topic, key: Buffer.from("warm-up"), value: Buffer.from("warm-up") }]);
        lines.push(await measure(client, topic));
      } finally {
        await client.close();
      }
    }
  }
} finally {
  await stack.stop();
}
console.log(`\n${records} records of ${contentBytes} bytes, ${batch} per request, one request in flight, acks = all, idempotent:\n`);
console.log("| client | records/s | request p50 | request p99 | CPU per 1000 records |");
console.log("|---|---|---|---|---|");
for (const l of lines) console.log(l);
