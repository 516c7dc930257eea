import type { Kafka } from "kafkajs";
import { EventLogWriter, type EventLogWriterOptions } from "./kafka-log.ts";
import { PlatformaticLogWriter } from "./platformatic-log.ts";

/** The Kafka clients the gateway's log writer can run on (`KAFKA_CLIENT`). */
export type KafkaClientName = "kafkajs" | "platformatic";

/** The gateway's log writer, whichever client it runs on. */
export interface LogWriter {
  /** Resolves once every in-sync replica has the record; LogBackpressureError at once when the queue is full. */
  append(topic: string, key: string, value: Buffer): Promise<void>;
  readonly queued: number;
  readonly waiting: number;
  readonly cap: number;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The one place the gateway's log writer is chosen: `platformatic` (the default since the
 * gateway's CPU bounds publishing: it was faster on the whole pipeline at 8 to 256 connections,
 * docs/performance.md, Kafka client) or `kafkajs`. Both keep the same caps, the same murmur2
 * partitioning and the same failure handling.
 */
export function createLogWriter(
  client: KafkaClientName,
  deps: { kafka: Kafka; brokers: string[]; clientId: string },
  opts: EventLogWriterOptions = {},
): LogWriter {
  if (client === "kafkajs") return new EventLogWriter(deps.kafka, opts);
  return new PlatformaticLogWriter({ ...opts, brokers: deps.brokers, clientId: deps.clientId });
}
