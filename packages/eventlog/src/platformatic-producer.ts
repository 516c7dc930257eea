import { compatibilityPartitioner, ProduceAcks, Producer } from "@platformatic/kafka";
import type { KafkaClient } from "./kafka-client.ts";
import { type LogWriterOptions, LogWriterCore, type ProducerAdapter } from "./log-writer.ts";

/**
 * How long a broker may wait for the in-sync replicas before answering a produce request
 * (`acks = all`), below the client's own request timeout so that a slow replica set gives the
 * broker's REQUEST_TIMED_OUT on a connection kept, not the client's timeout on a dropped one.
 */
function ackTimeoutMs(kafka: KafkaClient): number {
  return Math.max(1_000, kafka.timeouts.requestMs - 2_000);
}

/**
 * The writer core's adapter to @platformatic/kafka: an idempotent producer, acks = all, no
 * topic auto-creation, and murmur2 masked to 31 bits modulo the partition count (Java's and
 * kafkajs's partitioner, so a topic name lands where it always did).
 */
export function platformaticProducer(kafka: KafkaClient, clientId: string): ProducerAdapter {
  const producer = new Producer({
    ...kafka.options(clientId),
    idempotent: true,
    acks: ProduceAcks.ALL,
    partitioner: compatibilityPartitioner,
    timeout: ackTimeoutMs(kafka),
  });
  return {
    start: async () => {
      await producer.initIdempotentProducer({});
    },
    send: async (records) => {
      await producer.send({ messages: records.map((r) => ({ topic: r.topic, key: r.key, value: r.value, headers: r.headers })) });
    },
    close: () => producer.close(true),
  };
}

/**
 * The gateway's log writer: the writer core on @platformatic/kafka. It batches concurrent
 * publishes into one idempotent produce request at a time, waits for every in-sync replica,
 * refuses at once past 20,000 waiting, and replaces the producer after a failed send.
 */
export function createLogWriter(kafka: KafkaClient, opts: LogWriterOptions & { name?: string } = {}): LogWriterCore {
  const name = opts.name ?? "writer";
  return new LogWriterCore((generation) => platformaticProducer(kafka, `${name}-${generation}`), { logger: kafka.logger, ...opts });
}
