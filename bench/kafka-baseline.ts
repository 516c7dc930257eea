/**
 * The Kafka baseline of `npm run bench`: the services' one client (@platformatic/kafka, through
 * the writer's own producer adapter) producing the records a publish puts on the log, directly,
 * the way the gateway's writer sends them (idempotent, acks = all, one request in flight,
 * `batch` records per request, keyed by topic over 3 partitions). It bounds what the broker's
 * publish path could reach with this client.
 */
import { randomBytes } from "node:crypto";
import { encodeLogRecord, silentLogger } from "@evb/domain";
import { createKafka, ensureTopics, platformaticProducer } from "@evb/eventlog";

export async function kafkaBaseline(
  brokers: string[],
  opts: { records: number; batch: number; contentBytes: number; topics: number },
): Promise<{ records: number; recordsPerSec: number; batch: number }> {
  const kafka = createKafka({ brokers, clientId: "bench-kafka-baseline", logger: silentLogger });
  const topic = `bench${randomBytes(4).toString("hex")}.log.1`;
  await ensureTopics(kafka, [topic], 3, 1);
  const producer = platformaticProducer(kafka, "baseline");
  await producer.start();
  try {
    const content = Buffer.from("x".repeat(opts.contentBytes)).toString("base64");
    const messages = Array.from({ length: opts.records }, (_, i) => {
      const name = `kafka/t${i % opts.topics}`;
      const value = encodeLogRecord({
        v: 1,
        requestId: randomBytes(8).toString("hex"),
        gatewayId: "bench",
        groupId: "1",
        topic: name,
        content,
        extensions: {},
        sender: "",
        publishedAt: Date.now(),
      });
      return { topic, key: Buffer.from(name), value };
    });
    await producer.send(messages.slice(0, 1));
    const t0 = performance.now();
    for (let i = 0; i < messages.length; i += opts.batch) {
      await producer.send(messages.slice(i, i + opts.batch));
    }
    const seconds = (performance.now() - t0) / 1000;
    return { records: opts.records, recordsPerSec: opts.records / seconds, batch: opts.batch };
  } finally {
    await producer.close();
  }
}
